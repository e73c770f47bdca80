package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// Summary writes the end block: per flow a sender and a receiver line
// over the whole test, [SUM] lines per direction with several flows, the
// goodput of each direction, each end's MSS and MTU, the receiver's
// common read lengths, the senders' TCP internals (text_tcpinfo.go), CPU
// use, and any error.
func (t *Text) Summary(r *result.Result) error {
	if isUDP(r.Spec) {
		return t.udpSummary(r)
	}
	l := t.newLines(r.Spec)
	dirs := r.Directions()
	bidir := r.Spec.Bidir || len(dirs) > 1
	l.add("%s", separator)
	if t.Opt.Verbose && !t.ServerSide {
		l.add("Test Complete. Summary Results:")
	}
	l.add("%s", totalColumns(bidir))
	for _, d := range dirs {
		for _, f := range d.Flows {
			tag := flowTag(f.ID, d.SenderRole, bidir)
			l.add("%s", t.streamTotal(tag, f.Sent, "sender"))
			l.add("%s", t.streamTotal(tag, f.Received, "receiver"))
		}
		if len(d.Flows) > 1 {
			tag := sumTag(d.SenderRole, bidir)
			l.add("%s", t.sumTotal(tag, d.Sent, "sender"))
			l.add("%s", t.sumTotal(tag, d.Received, "receiver"))
		}
	}
	for _, d := range dirs {
		l.add("%s", t.goodput(d))
	}
	for _, d := range dirs {
		for _, f := range d.Flows {
			writeFlowDetails(l, t, f, flowTag(f.ID, d.SenderRole, bidir))
		}
	}
	for _, d := range dirs {
		writeTCPInternals(l, t, r, d, bidir)
	}
	for _, d := range dirs {
		for _, f := range d.Flows {
			writeMPTCP(l, t, f, flowTag(f.ID, d.SenderRole, bidir))
			writeTrips(l, f, flowTag(f.ID, d.SenderRole, bidir), t.Opt.Format)
		}
	}
	writeTail(l, r)
	return l.writeTo(t.W)
}

// writeTail ends the summary with CPU use and any error.
func writeTail(l *textLines, r *result.Result) {
	l.add("%s", cpuLine(r))
	if r.Lab != "" {
		l.add("%s", r.Lab)
	}
	for _, w := range r.Warnings {
		l.add("WARNING: %s", w)
	}
	if r.Error != "" {
		l.add("wireperf: test ended early: %s", r.Error)
	}
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		if e.Error != "" && e.Error != r.Error {
			l.add("wireperf: the %s reported: %s", roleName(e.Role), e.Error)
		}
	}
	writeServerOutput(l, r.ServerOutput)
}

// writeServerOutput shows the server's own report after the client's, as
// iperf3's client does: "Server output:" and the server's lines as they
// came, or "Server JSON output:" and its document.
func writeServerOutput(l *textLines, o *result.ServerOutput) {
	if o == nil {
		return
	}
	heading, body := "Server output:", o.Text
	if len(o.JSON) > 0 {
		var indented bytes.Buffer
		if json.Indent(&indented, o.JSON, "", "\t") != nil {
			return
		}
		heading, body = "Server JSON output:", indented.String()
	}
	l.add("")
	l.add("%s", heading)
	for _, line := range strings.SplitAfter(strings.TrimSuffix(body, "\n"), "\n") {
		l.raw(strings.TrimSuffix(line, "\n"))
	}
	l.add("")
}

// streamTotal is one end's total for one flow; "-" when its report is missing.
func (t *Text) streamTotal(tag string, s *result.Stream, which string) string {
	if s == nil {
		return fmt.Sprintf(totalLayout, tag, missing, missing, missing, "", which+" (no report)")
	}
	transfer, rate := amounts(s.Bytes, s.Seconds(), t.Opt.Format)
	retr := ""
	if which == "sender" {
		retr = fmt.Sprint(s.Retransmits)
	}
	return fmt.Sprintf(totalLayout, tag, timeSpan(s.Start, s.End), transfer, rate, retr, which)
}

func (t *Text) sumTotal(tag string, s result.Sum, which string) string {
	if s.Streams == 0 {
		return fmt.Sprintf(totalLayout, tag, missing, missing, missing, "", which+" (no report)")
	}
	transfer, rate := amounts(s.Bytes, s.Seconds, t.Opt.Format)
	retr := ""
	if which == "sender" {
		retr = fmt.Sprint(s.Retransmits)
	}
	return fmt.Sprintf(totalLayout, tag, timeSpan(s.Start, s.End), transfer, rate, retr, which)
}

// goodput states each direction's goodput: the receiver's bytes over the
// receiver's time (docs/metrics.md, "Goodput").
func (t *Text) goodput(d result.Direction) string {
	if d.Received.Streams == 0 {
		return fmt.Sprintf("Goodput %s: unknown, the receiver sent no report", d.Label())
	}
	transfer, rate := amounts(d.Received.Bytes, d.Received.Seconds, t.Opt.Format)
	drain := ""
	if d.Received.Drain >= 0.005 {
		drain = fmt.Sprintf(", the last %.2f s after the sender stopped: its socket buffer and the path's queue draining", d.Received.Drain)
	}
	return fmt.Sprintf("Goodput %s: %s (%s received in %.2f s%s)", d.Label(),
		strings.TrimSpace(rate), strings.TrimSpace(transfer), d.Received.Seconds, drain)
}

// writeFlowDetails writes a flow's MSS and MTU at each end, its sender's
// TCP figures when verbose, and the receiver's common read lengths.
func writeFlowDetails(l *textLines, t *Text, f result.Flow, tag string) {
	ends := []struct {
		role string
		s    *result.Stream
	}{{f.SenderRole, f.Sent}, {otherRole(f.SenderRole), f.Received}}
	if ends[0].role == result.RoleServer {
		ends[0], ends[1] = ends[1], ends[0] // client first
	}
	for _, e := range ends {
		if e.s != nil {
			l.add("%s %s: MSS size %s (MTU %s)", tag, e.role, byteCount(e.s.Socket.MSS), byteCount(e.s.Socket.MTU))
		}
	}
	// What autotuning made of the buffers that matter: the sender's send
	// buffer and the receiver's receive buffer, from start to end.
	var grew []string
	if s := f.Sent; s != nil && s.Socket.SndBufRequested == 0 && s.Socket.SndBufFinal > 0 {
		grew = append(grew, bufferGrowth(roleName(f.SenderRole)+" send", s.Socket.SndBufGranted, s.Socket.SndBufFinal))
	}
	if s := f.Received; s != nil && s.Socket.RcvBufRequested == 0 && s.Socket.RcvBufFinal > 0 {
		grew = append(grew, bufferGrowth(roleName(otherRole(f.SenderRole))+" receive", s.Socket.RcvBufGranted, s.Socket.RcvBufFinal))
	}
	if len(grew) > 0 {
		l.add("%s autotuned buffers: %s", tag, strings.Join(grew, "; "))
	}
	if t.Opt.Verbose && f.Sent != nil {
		l.add("%s %s", tag, senderTCP(f.Sent))
	}
	if f.Received != nil {
		writeReadLengths(l, tag, f.Received)
	}
}

// bufferGrowth renders "server receive 128 KBytes at the start, 70.0
// MBytes at the end".
func bufferGrowth(what string, start, end int64) string {
	size := func(n int64) string { return strings.TrimSpace(units.FormatTransfer(float64(n), units.AdaptiveBytes)) }
	if start <= 0 {
		return fmt.Sprintf("%s %s at the end", what, size(end))
	}
	return fmt.Sprintf("%s %s at the start, %s at the end", what, size(start), size(end))
}

// byteCount renders "8140 bytes", or "unknown" for 0.
func byteCount(n int) string {
	if n == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d bytes", n)
}

// senderTCP summarises the sender's TCP figures over the test.
func senderTCP(s *result.Stream) string {
	parts := []string{fmt.Sprintf("sender TCP: %d retransmits", s.Retransmits)}
	if s.MaxRTTus > 0 {
		parts = append(parts, fmt.Sprintf("RTT min/mean/max %s/%s/%s", rtt(s.MinRTTus), rtt(s.MeanRTTus), rtt(s.MaxRTTus)))
	}
	if s.MaxCwnd > 0 {
		parts = append(parts, "max cwnd "+strings.TrimSpace(window(s.MaxCwnd)))
	}
	if s.MaxSndWnd > 0 {
		parts = append(parts, "max send window "+strings.TrimSpace(window(s.MaxSndWnd)))
	}
	if s.Socket.Congestion != "" {
		parts = append(parts, "congestion control "+s.Socket.Congestion)
	}
	return strings.Join(parts, ", ")
}

// readShare is the share of reads above which a read length is listed.
const readShare = 0.05

// writeReadLengths lists the read lengths that occur in more than 5% of
// the receiver's reads, shortest first: a spread of short reads shows a
// receiver that keeps up with few bytes queued.
func writeReadLengths(l *textLines, tag string, s *result.Stream) {
	total := readTotal(s)
	if total <= 0 {
		return
	}
	var common []result.ReadLength
	for _, rl := range s.ReadLengths {
		if float64(rl.Count) > readShare*float64(total) {
			common = append(common, rl)
		}
	}
	if len(common) == 0 {
		return
	}
	sort.Slice(common, func(i, j int) bool { return common[i].Length < common[j].Length })
	width := max(5, len(fmt.Sprint(common[len(common)-1].Length))) // lengths line up
	l.add("%s Read lengths occurring in more than 5%% of reads:", tag)
	for _, rl := range common {
		l.add("%s %*d bytes read %d times (%.1f%%)", tag, width, rl.Length, rl.Count, 100*float64(rl.Count)/float64(total))
	}
}

// cpuLine reports each end's process CPU as iperf3 does, naming the
// ends' roles.
func cpuLine(r *result.Result) string {
	if r.Local.OneProcess {
		// One process's figure, not one per end: saying it twice as two
		// ends' would read as two measurements.
		c := r.Local.CPU
		return fmt.Sprintf("CPU Utilization: client and server in one process, %.1f%% (%.1f%%u/%.1f%%s) for both ends together",
			c.TotalPercent, c.UserPercent, c.SystemPercent)
	}
	return fmt.Sprintf("CPU Utilization: %s, %s", cpuEnd("local", &r.Local), cpuEnd("remote", &r.Remote))
}

func cpuEnd(where string, e *result.End) string {
	name := where
	if e.Role != "" {
		name += "/" + e.Role
	}
	if what := sendsOrReceives(e); what != "" {
		name += "/" + what
	}
	s := fmt.Sprintf("%s %.1f%% (%.1f%%u/%.1f%%s)", name, e.CPU.TotalPercent, e.CPU.UserPercent, e.CPU.SystemPercent)
	if n := e.ConcurrentTests; n > 0 {
		verb := "tests ran"
		if n == 1 {
			verb = "test ran"
		}
		// The figure is process-wide, so it includes the other tests' work.
		s += fmt.Sprintf(" (%s process total; %d other %s at the same time)", roleName(e.Role), n, verb)
	}
	return s
}

// sendsOrReceives says what an end did: "sender", "receiver" or both.
func sendsOrReceives(e *result.End) string {
	var sends, receives bool
	for _, s := range e.Streams {
		sends = sends || s.Sender
		receives = receives || !s.Sender
	}
	switch {
	case sends && receives:
		return "sender+receiver"
	case sends:
		return "sender"
	case receives:
		return "receiver"
	}
	return ""
}

// roleName names a role in prose, "peer" when unknown.
func roleName(role string) string {
	if role == "" {
		return "peer"
	}
	return role
}

func otherRole(role string) string {
	if role == result.RoleServer {
		return result.RoleClient
	}
	return result.RoleServer
}
