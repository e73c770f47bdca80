package emit

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// An isochronous UDP stream's frames (--isochronous; docs/udp.md,
// "Isochronous frames"): a line under each flow's interval row, and a
// sender's and a receiver's line in the summary.

// framesIntervalNote is the line under a flow's row with its frames; ""
// for a stream without frames.
func framesIntervalNote(row result.IntervalRow, f result.FlowInterval, bidir bool) string {
	var parts []string
	if u := udpOf(f.Sent); u != nil && u.Frames != nil {
		parts = append(parts, framesSent(u.Frames))
	}
	if u := udpOf(f.Received); u != nil && u.Frames != nil {
		parts = append(parts, framesReceived(u.Frames, false))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s  frames: %s", flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End), strings.Join(parts, "; "))
}

// framesSent is a sender's frames: begun, and begun late.
func framesSent(fr *result.Frames) string {
	s := units.Thousands(fr.Sent) + " sent"
	if fr.Late > 0 {
		s += fmt.Sprintf(" (%s late, by up to %.1f ms: sent late, none dropped)", units.Thousands(fr.Late), fr.LateMaxMs)
	}
	return s
}

// framesReceived is a receiver's frames and their latency; total adds
// what the latency rests on.
func framesReceived(fr *result.Frames, total bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s complete, %s incomplete, %s skipped (lost whole)",
		units.Thousands(fr.Complete), units.Thousands(fr.Incomplete), units.Thousands(fr.Skipped))
	if fr.Cut > 0 {
		fmt.Fprintf(&b, ", %s cut short by the sender's stop", units.Thousands(fr.Cut))
	}
	if p := fr.Latency; p != nil && p.Count > 0 {
		fmt.Fprintf(&b, ", latency min %s mean %s max %s (p50 %s, p90 %s, p99 %s)",
			micros(p.Min), micros(p.Mean), micros(p.Max), micros(p.P50), micros(p.P90), micros(p.P99))
	}
	if fr.JitterSamples > 0 {
		fmt.Fprintf(&b, ", frame jitter %.3f ms", fr.JitterMs)
	} else {
		b.WriteString(", frame jitter n/a")
	}
	if fr.Negative > 0 {
		fmt.Fprintf(&b, ", %s arrived before they were due", units.Thousands(fr.Negative))
	}
	if total {
		b.WriteString(" (latency: a frame's last datagram's arrival less its scheduled send time; ")
		if fr.Negative > 0 {
			b.WriteString(clocksNotCompared + ": the clocks are not synchronised, and the latencies are off by their offset)")
		} else {
			b.WriteString(clocksNotCompared + ": true only as far as the two clocks agree)")
		}
	}
	return b.String()
}

// framesSummary is a flow's frame lines of the summary, sender's then
// receiver's.
func framesSummary(sent, received *result.UDP) []string {
	var lines []string
	if sent != nil && sent.Frames != nil {
		lines = append(lines, "sender: frames "+framesSent(sent.Frames))
	}
	if received != nil && received.Frames != nil {
		lines = append(lines, "receiver: frames "+framesReceived(received.Frames, true))
	}
	return lines
}
