package advise

import (
	"github.com/wireperf/wireperf/internal/result"
)

// Steady is a sending stream after slow start, from its TCP_INFO samples:
// the last half of the time between slow start's end and the test's, by
// which BBR's startup has drained the queue it overshot into and CUBIC
// has recovered from the overshoot's losses (or not). It tells a path
// that is full, whose only losses were slow start's overshoot, from one
// that loses packets all along.
type Steady struct {
	From    float64 `json:"from"` // seconds since the test start
	To      float64 `json:"to"`
	RateBps float64 `json:"rate_bps"` // bytes acknowledged over From..To
	// Retrans is the segments retransmitted over From..To; Before those
	// retransmitted until From: slow start's overshoot and the recovery
	// from it.
	Retrans uint32 `json:"retrans_segments"`
	Before  uint32 `json:"retrans_segments_before"`
	// RetransBytes are the bytes retransmitted over From..To.
	RetransBytes uint64 `json:"retrans_bytes,omitempty"`
	// Rising: the span's second half delivered more than 5% above its
	// first, so the window was still growing back when the test ended.
	Rising bool `json:"rising,omitempty"`
}

// LossShare is the share of the bytes sent over the span that were
// retransmissions: retransmitted ÷ (acknowledged + retransmitted).
func (st *Steady) LossShare() float64 {
	acked := st.RateBps / 8 * (st.To - st.From)
	if acked <= 0 {
		return 0
	}
	return float64(st.RetransBytes) / (acked + float64(st.RetransBytes))
}

// steadyMinSamples is the fewest samples a steady span is read from.
const steadyMinSamples = 4

// SteadyOf reads the steady span from a stream's timeline; ssEnd is when
// slow start ended (seconds since the test start). Nil when the timeline
// is too short to tell, or slow start never ended.
func SteadyOf(tl *result.TCPTimeline, ssEnd float64) *Steady {
	if tl == nil || ssEnd <= 0 {
		return nil
	}
	samples := tl.Samples
	last := len(samples) - 1
	if last < 0 || samples[last].T <= ssEnd {
		return nil
	}
	from := ssEnd + (samples[last].T-ssEnd)/2
	i := 0
	for i < last && samples[i].T < from {
		i++
	}
	if last-i+1 < steadyMinSamples {
		return nil
	}
	a, z := samples[i], samples[last]
	if z.T <= a.T || z.BytesAcked < a.BytesAcked || z.TotalRetrans < a.TotalRetrans {
		return nil
	}
	st := &Steady{From: a.T, To: z.T, Retrans: z.TotalRetrans - a.TotalRetrans, Before: a.TotalRetrans}
	st.RateBps = float64(z.BytesAcked-a.BytesAcked) * 8 / (z.T - a.T)
	if z.BytesRetrans >= a.BytesRetrans {
		st.RetransBytes = z.BytesRetrans - a.BytesRetrans
	}
	m := samples[(i+last)/2]
	if m.T > a.T && z.T > m.T && m.BytesAcked >= a.BytesAcked && z.BytesAcked >= m.BytesAcked {
		first := float64(m.BytesAcked-a.BytesAcked) / (m.T - a.T)
		second := float64(z.BytesAcked-m.BytesAcked) / (z.T - m.T)
		st.Rising = second > 1.05*first
	}
	return st
}

// steadyOf is the steady span of a test's one sending stream in the
// sender's direction; nil with several streams or no timeline.
func steadyOf(r *result.Result, senderRole string) *Steady {
	var found *Steady
	n := 0
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		if e.Role != senderRole {
			continue
		}
		for i := range e.Streams {
			s := &e.Streams[i]
			if !s.Sender || s.TCPStats == nil {
				continue
			}
			n++
			if ss := s.TCPStats.SlowStart; ss != nil {
				found = SteadyOf(s.TCPTimeline, ss.End)
			}
		}
	}
	if n != 1 {
		return nil
	}
	return found
}
