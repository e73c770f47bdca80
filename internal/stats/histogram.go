package stats

import (
	"slices"

	"github.com/wireperf/wireperf/internal/result"
)

// RelativeDelayHistogram is the stream's relative one-way delay (each
// datagram's OWD less the smallest, which is PDV; docs/metrics.md
// "One-way delay") as a histogram in µs, the whole distribution behind
// Final's PDV percentiles. It is nil before Final, or when no datagram
// had its own receive time.
func (r *UDPReceiver) RelativeDelayHistogram() *result.Histogram {
	d := &r.tm.tot.delay
	if !r.done || d.n == 0 {
		return nil
	}
	out := &result.Histogram{Unit: "us", Count: d.n}
	shift := -d.min
	add := func(from, to int64, n int64) {
		out.Buckets = append(out.Buckets, result.HistogramBucket{
			From: float64(max(from+shift, 0)) / 1e3, To: float64(max(to+shift, 0)) / 1e3, Count: n,
		})
	}
	neg := d.neg.Distribution()
	slices.Reverse(neg)
	for _, b := range neg {
		if b.Count > 0 {
			add(-b.To, -b.From, b.Count)
		}
	}
	for _, b := range d.pos.Distribution() {
		if b.Count > 0 {
			add(b.From, b.To, b.Count)
		}
	}
	return out
}
