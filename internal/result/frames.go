package result

// Frames is an isochronous UDP stream's frames (--isochronous, iperf 2's
// meaning) over an interval row or the whole test, from one end's view:
// the sender fills the first three figures, the receiver the rest
// (docs/udp.md, "Isochronous frames"). A count that is absent from the
// JSON is 0.
type Frames struct {
	// Sent is the frames the sender began; Late those it began later than
	// their schedule (by more than LateTolerance): sent late, never
	// dropped. LateMaxMs is the latest start against the schedule.
	Sent      int64   `json:"sent,omitempty"`
	Late      int64   `json:"late,omitempty"`
	LateMaxMs float64 `json:"late_max_ms,omitempty"`

	// Seen is the frames of which a datagram arrived, judged in the row:
	// Complete those whose every datagram arrived, Incomplete the others.
	// Skipped is frames of which nothing arrived (lost whole), known by
	// the frame numbers around them. Cut (totals only) is frames the
	// sender's stop cut short: their missing datagrams were never sent.
	Seen       int64 `json:"seen,omitempty"`
	Complete   int64 `json:"complete,omitempty"`
	Incomplete int64 `json:"incomplete,omitempty"`
	Skipped    int64 `json:"skipped,omitempty"`
	Cut        int64 `json:"cut,omitempty"`
	// Latency is a complete frame's delivery latency: its last datagram's
	// arrival less the frame's scheduled send time, in µs. It compares the
	// two hosts' clocks as they stand, as one-way delay does without a
	// clock comparison (docs/metrics.md, "One-way delay"): Negative counts
	// the frames that arrived before they were due, which says the clocks
	// disagree, and they are in no latency figure.
	Latency  *Percentiles `json:"latency_us,omitempty"`
	Negative int64        `json:"negative,omitempty"`
	// JitterMs is RFC 3550's smoothed variation of consecutive complete
	// frames' latencies, in ms; JitterSamples the pairs it is made of.
	JitterMs      float64 `json:"jitter_ms,omitempty"`
	JitterSamples int64   `json:"jitter_samples,omitempty"`
}

// JoinFrames is the figures of two adjacent rows as one: counts add up,
// the latest lateness and the later jitter stand. Percentiles cannot be
// pooled, so a joined row keeps a latency only when one of the two rows
// has none. A new value: neither argument is changed.
func JoinFrames(a, b *Frames) *Frames {
	if a == nil || b == nil {
		if b != nil {
			c := *b
			return &c
		}
		if a != nil {
			c := *a
			return &c
		}
		return nil
	}
	j := *a
	j.Sent += b.Sent
	j.Late += b.Late
	j.LateMaxMs = max(a.LateMaxMs, b.LateMaxMs)
	j.Seen += b.Seen
	j.Complete += b.Complete
	j.Incomplete += b.Incomplete
	j.Skipped += b.Skipped
	j.Cut += b.Cut
	j.Negative += b.Negative
	j.JitterSamples += b.JitterSamples
	if b.JitterSamples > 0 {
		j.JitterMs = b.JitterMs
	}
	switch {
	case a.Latency == nil || a.Latency.Count == 0:
		j.Latency = b.Latency
	case b.Latency == nil || b.Latency.Count == 0:
	default:
		j.Latency = nil
	}
	if j.Latency != nil {
		l := *j.Latency
		j.Latency = &l
	}
	return &j
}
