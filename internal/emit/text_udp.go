package emit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// UDP text. Interval lines keep the TCP lines' shape: the sender's half
// (transfer, bitrate, datagrams sent) left of the bar, the receiver's
// (transfer, goodput, jitter, lost/total) right of it. The summary has
// iperf3's UDP table, a loss verdict per direction, and per flow what the
// table has no room for.

// udpIntervalFlowLine is one flow in one interval.
func udpIntervalFlowLine(t *Text, row result.IntervalRow, f result.FlowInterval, bidir bool) string {
	secs := row.End - row.Start
	sTransfer, sRate, sent := missing, missing, missing
	if s := f.Sent; s != nil {
		sTransfer, sRate = amounts(s.Bytes, secs, t.Opt.Format)
		if s.UDP != nil {
			sent = strconv.FormatInt(s.UDP.Sent, 10)
		}
	}
	rTransfer, rRate, jitter, lost := missing, missing, missing, missing
	if r := f.Received; r != nil {
		rTransfer, rRate = amounts(r.Bytes, secs, t.Opt.Format)
		jitter, lost = jitterCell(r.UDP), lostCell(r.UDP)
	}
	return fmt.Sprintf(udpIntervalLayout, flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End),
		sTransfer, sRate, sent, rTransfer, rRate, jitter, lost)
}

// udpIntervalNote is the line under a flow whose receiver saw datagrams
// out of order, twice or late in the interval; "" when it saw none.
func udpIntervalNote(row result.IntervalRow, f result.FlowInterval, bidir bool) string {
	u := udpOf(f.Received)
	if u == nil {
		return ""
	}
	var parts []string
	if u.Reordered > 0 {
		parts = append(parts, fmt.Sprintf("%s received out-of-order (max extent %d)", countNoun(u.Reordered, "datagram"), u.ReorderMaxExtent))
	}
	if u.Duplicates > 0 {
		parts = append(parts, countNoun(u.Duplicates, "duplicate"))
	}
	if u.Late > 0 {
		parts = append(parts, fmt.Sprintf("%s late (counted lost, then arrived)", countNoun(u.Late, "datagram")))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s  %s", flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End), strings.Join(parts, ", "))
}

// udpIntervalSumLine adds the flows of one direction in one interval.
func udpIntervalSumLine(t *Text, row result.IntervalRow, role string, bidir bool) string {
	secs := row.End - row.Start
	sum := sumRow(row, role)
	sentUDP, recvUDP := rowUDP(row, role)
	sTransfer, sRate, sent := missing, missing, missing
	if sum.hasSent {
		sTransfer, sRate = amounts(sum.sent, secs, t.Opt.Format)
		if sentUDP != nil {
			sent = strconv.FormatInt(sentUDP.Sent, 10)
		}
	}
	rTransfer, rRate, jitter, lost := missing, missing, missing, missing
	if sum.hasReceived {
		rTransfer, rRate = amounts(sum.received, secs, t.Opt.Format)
		jitter, lost = jitterCell(recvUDP), lostCell(recvUDP)
	}
	return fmt.Sprintf(udpIntervalLayout, sumTag(role, bidir), timeSpan(row.Start, row.End),
		sTransfer, sRate, sent, rTransfer, rRate, jitter, lost)
}

// jitterCell renders jitter in ms with three decimals, "n/a" when it is
// unknown (no datagram pairs to compare) and "-" without UDP figures.
func jitterCell(u *result.UDP) string {
	switch {
	case u == nil:
		return missing
	case u.JitterSamples == 0:
		return "n/a"
	}
	return fmt.Sprintf("%.3f ms", u.JitterMs)
}

// lostCell renders "lost/expected (percent%)", as iperf's Lost/Total,
// with provisionalMark after a row's loss that was not final yet.
func lostCell(u *result.UDP) string {
	if u == nil {
		return missing
	}
	cell := fmt.Sprintf("%d/%d (%s)", u.Lost, u.Expected, lossPercent(u.Lost, u.Expected))
	if u.Provisional {
		cell += provisionalMark
	}
	return cell
}

// provisionalMark follows an interval's loss that may still shrink: the
// late threshold had not passed for all of its datagrams when it was
// printed.
const provisionalMark = "*"

// provisionalNote explains provisionalMark under the summary.
func provisionalNote(late time.Duration) string {
	return fmt.Sprintf("%s interval loss printed before the late threshold (%v) had passed for all of its datagrams; the rows in -J are final and add up to the totals", provisionalMark, late)
}

// invalidLine tells of datagrams the receiver did not count; "" for none.
func invalidLine(u *result.UDP) string {
	if u.Invalid == 0 {
		return ""
	}
	line := fmt.Sprintf("receiver: %s not counted: not the sender's (a wrong token or stream, or a sequence number beyond what the sender sent)",
		countNoun(u.Invalid, "datagram"))
	if u.Forged > 0 {
		line += fmt.Sprintf("; %d of them forged (the test's token without a valid MAC)", u.Forged)
	}
	return line
}

// lossPercent renders lost ÷ total with up to two decimals: "0%",
// "0.77%", "31.28%", and "<0.01%" rather than "0%" for a small loss.
func lossPercent(lost, total int64) string {
	if lost <= 0 || total <= 0 {
		return "0%"
	}
	p := 100 * float64(lost) / float64(total)
	if p < 0.005 {
		return "<0.01%"
	}
	return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64) + "%"
}

// udpSummary is Summary for a UDP test: the table of each direction, its
// loss verdict, goodput, each flow's details, CPU use and any error.
func (t *Text) udpSummary(r *result.Result) error {
	l := t.newLines(r.Spec)
	dirs := r.Directions()
	bidir := r.Spec.Bidir || len(dirs) > 1
	l.add("%s", separator)
	if t.Opt.Verbose && !t.ServerSide {
		l.add("Test Complete. Summary Results:")
	}
	l.add("%s", udpTotalColumns(bidir))
	for _, d := range dirs {
		for _, f := range d.Flows {
			tag := flowTag(f.ID, d.SenderRole, bidir)
			l.add("%s", t.udpTotal(tag, f.Sent, streamUDP(f.Sent), "sender"))
			l.add("%s", t.udpTotal(tag, f.Received, streamUDP(f.Received), "receiver"))
		}
		if len(d.Flows) > 1 {
			tag := sumTag(d.SenderRole, bidir)
			sent, received := directionUDP(d)
			l.add("%s", t.udpSumTotal(tag, d.Sent, sent, "sender"))
			l.add("%s", t.udpSumTotal(tag, d.Received, received, "receiver"))
		}
		l.add("%s", lossLine(r, d))
		if line := receiverCPULine(r, d, bidir); line != "" {
			l.add("%s", line)
		}
	}
	for _, d := range dirs {
		l.add("%s", t.goodput(d))
	}
	late := r.Spec.EffectiveLateThreshold()
	for _, d := range dirs {
		for _, f := range d.Flows {
			tag := flowTag(f.ID, d.SenderRole, bidir)
			if u := streamUDP(f.Sent); u != nil {
				l.add("%s %s", tag, udpSenderDetail(u))
				if line := scheduleLine(u.Schedule, t.Opt.Format); line != "" {
					l.add("%s %s", tag, line)
				}
			}
			if u := streamUDP(f.Received); u != nil {
				l.add("%s %s", tag, udpReceiverDetail(u, late))
				if line := invalidLine(u); line != "" {
					l.add("%s %s", tag, line)
				}
				for _, line := range delayLines(u) {
					l.add("%s %s", tag, line)
				}
				if line := timestampLine(u); line != "" {
					l.add("%s %s", tag, line)
				}
			}
			for _, line := range framesSummary(streamUDP(f.Sent), streamUDP(f.Received)) {
				l.add("%s %s", tag, line)
			}
			if f.Received != nil {
				writeReadLengths(l, tag, f.Received)
			}
		}
		if len(d.Flows) > 1 {
			tag := sumTag(d.SenderRole, bidir)
			sent, received := directionUDP(d)
			if sent != nil {
				l.add("%s %s", tag, udpSenderDetail(sent))
			}
			if received != nil {
				l.add("%s %s", tag, udpReceiverDetail(received, late))
			}
		}
	}
	if t.provisional {
		l.add("%s", provisionalNote(late))
	}
	writeTail(l, r)
	return l.writeTo(t.W)
}

// udpTotal is one end's total for one flow; "-" when its report is missing.
func (t *Text) udpTotal(tag string, s *result.Stream, u *result.UDP, which string) string {
	if s == nil {
		return fmt.Sprintf(udpTotalLayout, tag, missing, missing, missing, "", "", which+" (no report)")
	}
	transfer, rate := amounts(s.Bytes, s.Seconds(), t.Opt.Format)
	jitter, lost := udpTotalCells(u, which)
	return fmt.Sprintf(udpTotalLayout, tag, timeSpan(s.Start, s.End), transfer, rate, jitter, lost, which)
}

func (t *Text) udpSumTotal(tag string, s result.Sum, u *result.UDP, which string) string {
	if s.Streams == 0 {
		return fmt.Sprintf(udpTotalLayout, tag, missing, missing, missing, "", "", which+" (no report)")
	}
	transfer, rate := amounts(s.Bytes, s.Seconds, t.Opt.Format)
	jitter, lost := udpTotalCells(u, which)
	return fmt.Sprintf(udpTotalLayout, tag, timeSpan(s.Start, s.End), transfer, rate, jitter, lost, which)
}

// udpTotalCells fills the Jitter and Lost/Total columns: the receiver's
// figures, or for the sender, which measures neither, the datagrams it
// sent (where iperf3 prints a made-up "0.000 ms  0/N (0%)").
func udpTotalCells(u *result.UDP, which string) (jitter, lost string) {
	if which == "sender" {
		if u == nil {
			return "", missing
		}
		return "", fmt.Sprintf("%d sent", u.Sent)
	}
	return jitterCell(u), lostCell(u)
}

// scheduleLine says what held a paced sender below its rate, or what
// spinning cost it; "" when it held its rate without spinning.
func scheduleLine(s *result.Schedule, f units.Format) string {
	if s == nil {
		return ""
	}
	var cause string
	switch s.Limit {
	case "":
	case "CPU-bound":
		cause = fmt.Sprintf("CPU-bound (%.0f%% of a core)", s.CPUPercent)
	case "socket buffer full":
		cause = fmt.Sprintf("the socket buffer was full (%s sends refused: ENOBUFS/EAGAIN)", units.Thousands(s.BufferFull))
	case "slow send calls":
		cause = fmt.Sprintf("slow send calls (%s of %s took longer than their slot)", units.Thousands(s.SlowSends), units.Thousands(s.Sends))
	case "descheduled":
		cause = fmt.Sprintf("descheduled (%.0f%% of a core used, but its wake-ups came late: the machine is busy)", s.CPUPercent)
	default:
		cause = fmt.Sprintf("cause unknown (%.0f%% of a core, no refused or slow sends)", s.CPUPercent)
	}
	if cause != "" {
		line := fmt.Sprintf("sender: %s of %s requested (%.0f%%): %s", strings.TrimSpace(units.FormatRate(s.SentBps, f)),
			strings.TrimSpace(units.FormatRate(s.RequestedBps, f)), 100*s.SentBps/s.RequestedBps, cause)
		if s.WrittenOff > 0 {
			line += fmt.Sprintf("; %s datagrams written off the schedule", units.Thousands(s.WrittenOff))
		}
		if s.Spin {
			line += fmt.Sprintf("; spinning (--spin) cost %.0f%% of a core", s.CPUPercent)
		}
		return line
	}
	if s.Spin {
		return fmt.Sprintf("sender: spinning to hold each gap (--spin) cost %.0f%% of a core", s.CPUPercent)
	}
	return ""
}

// receiverCPULine warns that a direction's receiving process was
// CPU-bound: then it, not the path, may have dropped datagrams. Not for
// bidirectional tests, where each end both sends and receives.
func receiverCPULine(r *result.Result, d result.Direction, bidir bool) string {
	if bidir {
		return ""
	}
	e := &r.Local
	if e.Role == d.SenderRole {
		e = &r.Remote
	}
	if e.CPU.TotalPercent < 90 {
		return ""
	}
	return fmt.Sprintf("receiver: CPU-bound (%.0f%% of a core): it may have dropped datagrams itself, in its socket buffer", e.CPU.TotalPercent)
}

// lossLine states where a direction's lost datagrams were dropped.
func lossLine(r *result.Result, d result.Direction) string {
	if _, received := directionUDP(d); received == nil {
		return fmt.Sprintf("Loss %s: unknown, the receiver sent no report", d.Label())
	}
	return fmt.Sprintf("Loss %s: %s", d.Label(), lossOf(r, d).Verdict)
}

// udpSenderDetail summarises the sender's side: datagrams sent, failed
// sends, GSO, and how well it kept its schedule.
func udpSenderDetail(u *result.UDP) string {
	s := "sender: " + units.Thousands(u.Sent) + " datagrams sent"
	if u.SendErrors > 0 {
		s += ", " + units.Thousands(u.SendErrors) + " send errors"
	}
	if u.GSOSegments > 1 {
		s += fmt.Sprintf(", up to %d per send as GSO segments", u.GSOSegments)
	}
	if p := pacing(u.Spacing); p != "" {
		s += "; " + p
	}
	return s
}

// pacing describes the achieved send spacing against the schedule.
func pacing(sp *result.Spacing) string {
	if sp == nil || sp.Samples == 0 {
		return ""
	}
	if sp.TargetNs <= 0 {
		return "pacing: none (as fast as possible), mean spacing " + micros(sp.MeanNs/1000)
	}
	return fmt.Sprintf("pacing: mean %s, error p50 %s p99 %s max %s (target %s)", micros(sp.MeanNs/1000),
		micros(sp.ErrP50Ns/1000), micros(sp.ErrP99Ns/1000), micros(sp.ErrMaxNs/1000), micros(float64(sp.TargetNs)/1000))
}

// udpReceiverDetail summarises the receiver's counts.
func udpReceiverDetail(u *result.UDP, lateAfter time.Duration) string {
	jitter := "jitter n/a"
	if u.JitterSamples > 0 {
		jitter = fmt.Sprintf("jitter %.3f ms", u.JitterMs)
	}
	reordered := units.Thousands(u.Reordered) + " reordered"
	if u.Reordered > 0 {
		reordered += fmt.Sprintf(" (max extent %d)", u.ReorderMaxExtent)
	}
	return fmt.Sprintf("receiver: %s datagrams received, %s, lost %s/%s (%s), %s late (arrived after %v), %s, %s",
		units.Thousands(u.Received), jitter, units.Thousands(u.Lost), units.Thousands(u.Expected), lossPercent(u.Lost, u.Expected),
		units.Thousands(u.Late), lateAfter, countNoun(u.Duplicates, "duplicate"), reordered)
}

// The label of relative one-way delay: without a clock comparison only
// the delay above the smallest one seen means anything.
const relativeOWDLabel = "relative one-way delay (OWD − min OWD; " + clocksNotCompared + ")"

// delayLines are the receiver's delay distributions: IPDV, PDV, and
// one-way delay, absolute when the clocks were compared, else relative.
// Relative OWD is PDV by definition; when both are given and agree, one
// line carries both names.
func delayLines(u *result.UDP) []string {
	var lines []string
	if u.IPDV != nil {
		lines = append(lines, "IPDV (delay variation between consecutive datagrams): "+percentiles(u.IPDV))
	}
	owd := u.OWD
	switch {
	case owd != nil && owd.Absolute && owd.AbsoluteUs != nil:
		if u.PDV != nil {
			lines = append(lines, "PDV (delay − min delay): "+percentiles(u.PDV))
		}
		lines = append(lines, fmt.Sprintf("one-way delay (clock offset %s ± %s): %s",
			micros(owd.OffsetUs), micros(owd.ErrorBoundUs), percentiles(owd.AbsoluteUs)))
	case owd != nil && u.PDV != nil && owd.Relative == *u.PDV:
		lines = append(lines, "PDV = "+relativeOWDLabel+": "+percentiles(u.PDV))
	default:
		if u.PDV != nil {
			lines = append(lines, "PDV (delay − min delay): "+percentiles(u.PDV))
		}
		if owd != nil && owd.Relative.Count > 0 {
			lines = append(lines, relativeOWDLabel+": "+percentiles(&owd.Relative))
		}
	}
	return lines
}

// percentiles renders a distribution in µs (ms where large).
func percentiles(p *result.Percentiles) string {
	return fmt.Sprintf("min %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s (%s samples)",
		micros(p.Min), micros(p.P50), micros(p.P90), micros(p.P99), micros(p.P999), micros(p.Max), units.Thousands(p.Count))
}

// timestampLine says where receive times came from and how the jitter
// was computed.
func timestampLine(u *result.UDP) string {
	var parts []string
	if u.TimestampSource != "" {
		parts = append(parts, "timestamps: "+u.TimestampSource)
	}
	method := u.JitterMethod
	if method == "" {
		switch u.TimestampSource {
		case "kernel":
			method = "kernel timestamps"
		case "user-space":
			method = "user-space clock"
		}
	}
	switch {
	case u.JitterSamples == 0:
		parts = append(parts, "jitter n/a (no datagram pairs to compare)")
	case method != "":
		s := fmt.Sprintf("jitter from %s (%s samples", method, units.Thousands(u.JitterSamples))
		if u.GROBatches > 0 {
			s += ", " + units.Thousands(u.GROBatches) + " GRO batches"
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, "; ")
}

// micros renders microseconds: "4.1 µs", "12.35 ms", "1.20 s".
func micros(us float64) string {
	switch a := math.Abs(us); {
	case a < 1000:
		return fmt.Sprintf("%.1f µs", us)
	case a < 1e6:
		return fmt.Sprintf("%.2f ms", us/1000)
	default:
		return fmt.Sprintf("%.2f s", us/1e6)
	}
}

// countNoun writes "1 duplicate", "2 duplicates", "1,200 datagrams".
func countNoun(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return units.Thousands(n) + " " + noun + "s"
}

// describeUDP adds a UDP test's pacing and loss threshold to the
// parameters line.
func describeUDP(s spec.Spec) []string {
	var parts []string
	switch {
	case s.Rate > 0 && s.Burst > 0:
		parts = append(parts, fmt.Sprintf("target %s in bursts of %d", strings.TrimSpace(units.FormatRate(s.Rate, 0)), s.Burst))
	case s.Rate > 0:
		parts = append(parts, "target "+strings.TrimSpace(units.FormatRate(s.Rate, 0)))
	case s.PPS > 0:
		parts = append(parts, fmt.Sprintf("%d datagrams/sec", s.PPS))
	case s.Spacing > 0:
		parts = append(parts, fmt.Sprintf("one datagram every %v", s.Spacing))
	default:
		parts = append(parts, "unpaced (as fast as possible)")
	}
	if s.NoGSO {
		parts = append(parts, "no GSO")
	}
	parts = append(parts, fmt.Sprintf("lost after %v", s.EffectiveLateThreshold()))
	return parts
}

// udpOneEndColumns heads one end's UDP rows (Text.OneEnd): a receiver's
// jitter and loss, or, when the end only sends, its datagrams.
func udpOneEndColumns(r *result.Result, row result.IntervalRow, bidir bool) string {
	for _, f := range row.Flows {
		if senderRoleOf(f.SenderRole) != r.Local.Role {
			return fmt.Sprintf(udpOneEndReceiverLayout, idColumn(bidir), "Interval", "Transfer", "Bitrate", "Jitter", "Lost/Total Datagrams")
		}
	}
	return fmt.Sprintf(udpOneEndSenderLayout, idColumn(bidir), "Interval", "Transfer", "Bitrate", "Total Datagrams")
}

// udpOneEndFlowLine is a UDP flow's row from the end whose record r is
// alone: what it sent, or what it received with jitter and loss.
func udpOneEndFlowLine(t *Text, r *result.Result, row result.IntervalRow, f result.FlowInterval, bidir bool) string {
	secs := row.End - row.Start
	tag := flowTag(f.ID, senderRoleOf(f.SenderRole), bidir)
	if senderRoleOf(f.SenderRole) == r.Local.Role {
		transfer, rate, sent := missing, missing, missing
		if s := f.Sent; s != nil {
			transfer, rate = amounts(s.Bytes, secs, t.Opt.Format)
			if s.UDP != nil {
				sent = strconv.FormatInt(s.UDP.Sent, 10)
			}
		}
		return fmt.Sprintf(udpOneEndSenderLayout, tag, timeSpan(row.Start, row.End), transfer, rate, sent)
	}
	transfer, rate, jitter, lost := missing, missing, missing, missing
	if rc := f.Received; rc != nil {
		transfer, rate = amounts(rc.Bytes, secs, t.Opt.Format)
		jitter, lost = jitterCell(rc.UDP), lostCell(rc.UDP)
	}
	return fmt.Sprintf(udpOneEndReceiverLayout, tag, timeSpan(row.Start, row.End), transfer, rate, jitter, lost)
}

func udpOneEndSumLine(t *Text, r *result.Result, row result.IntervalRow, role string, bidir bool) string {
	secs := row.End - row.Start
	sum := sumRow(row, role)
	sentUDP, recvUDP := rowUDP(row, role)
	if role == r.Local.Role {
		transfer, rate, sent := missing, missing, missing
		if sum.hasSent {
			transfer, rate = amounts(sum.sent, secs, t.Opt.Format)
			if sentUDP != nil {
				sent = strconv.FormatInt(sentUDP.Sent, 10)
			}
		}
		return fmt.Sprintf(udpOneEndSenderLayout, sumTag(role, bidir), timeSpan(row.Start, row.End), transfer, rate, sent)
	}
	transfer, rate, jitter, lost := missing, missing, missing, missing
	if sum.hasReceived {
		transfer, rate = amounts(sum.received, secs, t.Opt.Format)
		jitter, lost = jitterCell(recvUDP), lostCell(recvUDP)
	}
	return fmt.Sprintf(udpOneEndReceiverLayout, sumTag(role, bidir), timeSpan(row.Start, row.End), transfer, rate, jitter, lost)
}
