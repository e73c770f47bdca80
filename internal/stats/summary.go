package stats

import (
	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/wireperf/wireperf/internal/result"
)

// Summarize reduces a latency histogram to the percentiles that
// request-response tests report (docs/metrics.md; min, mean, p50, p90,
// p99, p99.9, max), in µs. unitNs is what one histogram unit is worth in
// ns (1 if it holds ns, 1000 if µs). Values are the histogram's, so
// precise to its significant digits. A nil or empty histogram gives a zero
// Count.
func Summarize(h *hdrhistogram.Histogram, unitNs int64) result.Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return result.Percentiles{}
	}
	us := float64(unitNs) / 1e3
	q := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) * us }
	return result.Percentiles{
		Count: h.TotalCount(),
		Min:   float64(h.Min()) * us,
		Mean:  h.Mean() * us,
		P50:   q(50),
		P90:   q(90),
		P99:   q(99),
		P999:  q(99.9),
		Max:   float64(h.Max()) * us,
	}
}
