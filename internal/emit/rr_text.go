package emit

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// RRText writes a request-response test's report as text: for each size
// (or each phase under load) the transactions, loss and rate, then the
// RTT, network RTT, server time and one-way delay percentiles.
type RRText struct {
	W   io.Writer
	Opt Options
	// From, set on a server, is the client's address: the test came from
	// it rather than went to r.ServerAddr.
	From string
}

// Write renders a finished rr test.
func (t *RRText) Write(r *result.Result) error {
	l := (&Text{Opt: t.Opt}).newLines(r.Spec)
	lr := r.Local.RR
	if t.From != "" {
		l.add("Request-response from %s: %s", t.From, describeRR(r.Spec))
	} else {
		l.add("Request-response to %s: %s", r.ServerAddr, describeRR(r.Spec))
	}
	if lr == nil {
		if r.Error != "" {
			l.add("error: %s", r.Error)
		}
		return l.writeTo(t.W)
	}
	if lr.Load != nil {
		writeLoadHeader(l, lr.Load)
	}
	if c := lr.Clock; c != nil {
		l.add("Clock offset (server − client): %+.1f µs ± %.1f µs, from the %s; one-way delays are corrected by it and only as good as its bound",
			c.OffsetUs, c.ErrorBoundUs, c.Source)
	} else {
		l.add("Clock offset: no estimate; one-way delays are not shown")
	}
	if lr.Timestamps != "" {
		l.add("Timestamps: %s", lr.Timestamps)
	}
	for _, p := range lr.Points {
		writeRRPoint(l, p, phaseOf(lr.Load, p.Label))
	}
	if lr.Load != nil {
		writeLoadSummary(l, lr.Points, lr.Load)
	}
	writeRRCPU(l, r)
	if r.Lab != "" {
		l.add("%s", r.Lab)
	}
	for _, w := range r.Warnings {
		l.add("WARNING: %s", w)
	}
	if r.Error != "" {
		l.add("error: %s", r.Error)
	}
	return l.writeTo(t.W)
}

func describeRR(s spec.Spec) string {
	var b strings.Builder
	switch s.RRMode {
	case spec.RRUDP:
		b.WriteString("UDP")
	case spec.RRTCP:
		b.WriteString("TCP")
	case spec.RRCRR:
		b.WriteString("TCP, a new connection per transaction (crr)")
	}
	if s.RRInterval > 0 {
		fmt.Fprintf(&b, ", a request every %v", s.RRInterval)
	} else {
		b.WriteString(", back to back")
	}
	switch {
	case s.RRCount > 0 && s.Duration > 0:
		fmt.Fprintf(&b, ", %d transactions or %v per size", s.RRCount, s.Duration)
	case s.RRCount > 0:
		fmt.Fprintf(&b, ", %d transactions per size", s.RRCount)
	}
	if s.RRBusyPoll {
		b.WriteString(", busy polling")
	}
	return b.String()
}

// rrUnit picks µs or ms for a point's figures, from its median RTT.
func rrUnit(p result.RRPoint) (name string, div float64) {
	if p.RTT.P50 >= 10000 {
		return "ms", 1000
	}
	return "µs", 1
}

// phaseOf is the load's record of a phase, nil outside latency under
// load.
func phaseOf(load *result.RRLoad, label string) *result.RRPhase {
	if load == nil || label == "" {
		return nil
	}
	for i := range load.Phases {
		if load.Phases[i].Label == label {
			return &load.Phases[i]
		}
	}
	return nil
}

func writeRRPoint(l *textLines, p result.RRPoint, phase *result.RRPhase) {
	head := fmt.Sprintf("[%d → %d bytes]", p.RequestSize, p.ResponseSize)
	if p.Label != "" {
		head = fmt.Sprintf("[%s, %d → %d bytes]", p.Label, p.RequestSize, p.ResponseSize)
	}
	loss := ""
	if p.Lost > 0 || p.Late > 0 || p.Sent > p.Completed {
		loss = fmt.Sprintf(", %d lost (%.3g%%)", p.Lost, p.LossPercent())
		if p.Late > 0 {
			loss += fmt.Sprintf(" of which %d came late", p.Late)
		}
	} else {
		loss = ", 0 lost"
	}
	if p.Errors > 0 {
		loss += fmt.Sprintf(", %d errors", p.Errors)
	}
	incomplete := ""
	if phase != nil && phase.Incomplete {
		incomplete = fmt.Sprintf("  (INCOMPLETE: ran %.2f s of %.2f s)", phase.Seconds, phase.PlannedSeconds)
	}
	l.add("%s %d transactions in %.2f s: %s/s%s%s", head, p.Completed, p.Seconds, thousands(p.TransactionsPerSecond), loss, incomplete)
	if p.Completed == 0 {
		return
	}
	unit, div := rrUnit(p)
	l.add("  %-14s %9s %9s %9s %9s %9s %9s %9s  (%s)", "", "min", "mean", "p50", "p90", "p99", "p99.9", "max", unit)
	row := func(name string, q *result.Percentiles, note string) {
		if q == nil || q.Count == 0 {
			return
		}
		f := func(v float64) string { return fmt.Sprintf("%.*f", decimals(div), v/div) }
		l.add("  %-14s %9s %9s %9s %9s %9s %9s %9s%s", name, f(q.Min), f(q.Mean), f(q.P50), f(q.P90), f(q.P99), f(q.P999), f(q.Max), note)
	}
	row("RTT", &p.RTT, "")
	netNote := "  RTT − server time"
	if p.ClientTime != nil {
		netNote = "  RTT − server time − client time"
	}
	row("network RTT", &p.NetworkRTT, netNote)
	row("server time", &p.ServerTime, "  T3 − T2")
	row("client time", p.ClientTime, "  T4 − kernel receive time")
	for _, f := range p.HostFlags {
		l.add("  %s", hostFlagLine(f, div))
	}
	row("forward OWD", p.ForwardOWD, "  T2 − T1, clock-corrected")
	row("backward OWD", p.BackwardOWD, "  T4 − T3, clock-corrected")
	if sp := p.Spacing; sp != nil && sp.Samples > 1 {
		l.add("  schedule: target %v, achieved mean %v, error p99 %v", time.Duration(sp.TargetNs), time.Duration(sp.MeanNs).Round(time.Microsecond/10),
			time.Duration(sp.ErrP99Ns).Round(time.Microsecond/10))
	}
}

// hostFlagLine says which host's scheduling is behind a network RTT
// figure, by how much, and the figure without the transactions hosts
// delayed.
func hostFlagLine(f result.RRHostFlag, div float64) string {
	unit := "ms"
	if div == 1 {
		unit = "µs"
	}
	v := func(us float64) string { return fmt.Sprintf("%.*f %s", decimals(div), us/div, unit) }
	share := "T3 − T2"
	if f.Host == result.RoleClient {
		share = "T1 to the send's return, plus T4 after the kernel's receive time"
	}
	what := fmt.Sprintf("is a transaction the %s host delayed by %s", f.Host, v(f.ShareUs))
	if f.Figure != "max" {
		n := "transactions"
		if f.Transactions == 1 {
			n = "transaction"
		}
		what = fmt.Sprintf("holds %d %s the %s host delayed, by up to %s", f.Transactions, n, f.Host, v(f.ShareUs))
	}
	without := "every transaction was host-delayed"
	if f.WithoutUs != nil {
		without = fmt.Sprintf("without host-delayed transactions %s %s", f.Figure, v(*f.WithoutUs))
	}
	return fmt.Sprintf("HOST DELAY: network RTT %s %s %s (%s; over %s is the host's, not the path's); %s",
		f.Figure, v(f.NetworkRTTUs), what, share, v(f.HostDelayedUs), without)
}

func decimals(div float64) int {
	if div > 1 {
		return 3
	}
	return 1
}

func thousands(v float64) string {
	n := int64(v + 0.5)
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func writeLoadHeader(l *textLines, ld *result.RRLoad) {
	dir := map[string]string{"up": "client → server", "down": "server → client", "both": "both ways"}[ld.Direction]
	streams := "streams"
	if ld.Streams == 1 {
		streams = "stream"
	}
	l.add("Latency under load: probes idle, then during a %s load of %d %s (%s), then after", strings.ToUpper(ld.Protocol), ld.Streams, streams, dir)
}

func writeLoadSummary(l *textLines, points []result.RRPoint, ld *result.RRLoad) {
	var idle, loaded *result.RRPoint
	for i := range points {
		switch points[i].Label {
		case "idle":
			idle = &points[i]
		case "loaded":
			loaded = &points[i]
		}
	}
	if ld.UpBitsPerSecond > 0 || ld.DownBitsPerSecond > 0 {
		var parts []string
		if ld.UpBitsPerSecond > 0 {
			parts = append(parts, units.FormatRate(ld.UpBitsPerSecond, 'a')+" client → server"+lossNote(ld.UpLostPercent))
		}
		if ld.DownBitsPerSecond > 0 {
			parts = append(parts, units.FormatRate(ld.DownBitsPerSecond, 'a')+" server → client"+lossNote(ld.DownLostPercent))
		}
		l.add("Load carried: %s", strings.Join(parts, ", "))
	}
	if ld.LoadError != "" {
		l.add("Load failed: %s", ld.LoadError)
	}
	if idle == nil || loaded == nil || idle.Completed == 0 || loaded.Completed == 0 {
		l.add("RTT under load: not enough probes in both phases to compare")
		return
	}
	in := ld.Increase
	l.add("RTT increase under load (loaded − idle): p50 %+.3f ms, p90 %+.3f ms, p99 %+.3f ms; idle p50 %.3f ms, loaded p50 %.3f ms",
		in.P50/1e3, in.P90/1e3, in.P99/1e3, idle.RTT.P50/1e3, loaded.RTT.P50/1e3)
	l.add("Probe loss: idle %.3g%%, loaded %.3g%%", idle.LossPercent(), loaded.LossPercent())
	if in.P50 > 1000 && in.P50 > idle.RTT.P50 && len(ld.HostDelays) == 0 {
		l.add("The load more than doubles the RTT: the bottleneck's queue holds about %.1f ms of data (bufferbloat)", in.P50/1e3)
	}
	for _, h := range ld.HostDelays {
		l.add("WARNING: in the %s phase the %s added delay (%.3f ms at p99): %s", h.Phase, h.Host, h.AddedUs/1e3, h.Reason)
	}
}

// lossNote is " (x% of datagrams lost)" for a UDP load, "" otherwise.
func lossNote(p *float64) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf(" (%.3g%% of datagrams lost)", *p)
}

func writeRRCPU(l *textLines, r *result.Result) {
	cpu := func(e result.End) string {
		return fmt.Sprintf("%.1f%% (user %.1f%%, system %.1f%%)", e.CPU.TotalPercent, e.CPU.UserPercent, e.CPU.SystemPercent)
	}
	// Each end named by its role, the client's first: on the server the
	// local end is the server's.
	line := "CPU: client " + cpu(r.Local)
	switch {
	case r.Local.Role == result.RoleServer && r.Remote.RR != nil:
		line = "CPU: client " + cpu(r.Remote) + ", server " + cpu(r.Local)
	case r.Local.Role == result.RoleServer:
		line = "CPU: server " + cpu(r.Local)
	case r.Remote.RR != nil:
		line += ", server " + cpu(r.Remote)
	}
	if lr := r.Local.RR; lr != nil && lr.BusyPoll {
		line += "; busy polling costs a core on each end"
		if lr.BusyPollSocket != "" {
			line += " (" + r.Local.Role + ": " + lr.BusyPollSocket + ")"
		}
	}
	l.add("%s", line)
}
