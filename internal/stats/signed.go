package stats

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/wireperf/wireperf/internal/result"
)

// Histogram geometry for delay figures, in ns. Two significant digits (a
// bucket is at most 1/128 wide, under 1 %) keep a histogram at ~32 KiB; a
// receiver holds eight. Values beyond histMax are counted as histMax; the
// exact minimum and maximum are kept beside the histogram.
const (
	histMax    = 100e9 // 100 s
	histDigits = 2
)

// signedDist is a distribution of signed ns values (IPDV is negative half
// the time; delays relative to a reference can be). An HDR histogram only
// takes non-negative values, and an offset would spoil its relative
// precision, so non-negative values go to pos and the magnitudes of
// negative ones to neg; a rank in the signed order maps to one of them.
type signedDist struct {
	pos, neg *hdrhistogram.Histogram
	n        int64
	sum      float64 // for the mean; float, as garbage input may not fit int64
	min, max int64
}

func newSignedDist() signedDist {
	return signedDist{
		pos: hdrhistogram.New(1, histMax, histDigits),
		neg: hdrhistogram.New(1, histMax, histDigits),
	}
}

func (d *signedDist) record(v int64) {
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	d.sum += float64(v)
	h := d.pos
	if v < 0 {
		h, v = d.neg, -v // -MinInt64 stays negative: clamped below
	}
	if v < 0 || v > histMax {
		v = histMax
	}
	// Cannot fail: v is in range (an error would allocate).
	_ = h.RecordValue(v)
}

// quantile returns the value at percentile p (0..100) by the nearest-rank
// method, to the histogram's precision and within the exact min and max.
func (d *signedDist) quantile(p float64) int64 {
	if d.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(d.n)))
	rank = min(max(rank, 1), d.n)
	var v int64
	if nNeg := d.neg.TotalCount(); rank <= nNeg {
		// Negatives ascend as their magnitudes descend.
		v = -valueAtRank(d.neg, nNeg-rank+1)
	} else {
		v = valueAtRank(d.pos, rank-nNeg)
	}
	return min(max(v, d.min), d.max)
}

// valueAtRank returns the value of the rank-th smallest (1-based) entry.
func valueAtRank(h *hdrhistogram.Histogram, rank int64) int64 {
	// The library's rank for p is int(p/100*n + 0.5), so p = 100*rank/n
	// lands exactly on rank.
	return h.ValueAtPercentile(100 * float64(rank) / float64(h.TotalCount()))
}

func (d *signedDist) merge(o *signedDist) {
	if o.n == 0 {
		return
	}
	if d.n == 0 || o.min < d.min {
		d.min = o.min
	}
	if d.n == 0 || o.max > d.max {
		d.max = o.max
	}
	d.n += o.n
	d.sum += o.sum
	d.pos.Merge(o.pos)
	d.neg.Merge(o.neg)
}

func (d *signedDist) reset() {
	d.pos.Reset()
	d.neg.Reset()
	d.n, d.sum, d.min, d.max = 0, 0, 0, 0
}

// percentiles summarises the distribution with every value moved by shift
// ns, in µs; nil when empty.
func (d *signedDist) percentiles(shift int64) *result.Percentiles {
	if d.n == 0 {
		return nil
	}
	us := func(v int64) float64 { return float64(v+shift) / 1e3 }
	return &result.Percentiles{
		Count: d.n,
		Min:   us(d.min),
		Mean:  (d.sum/float64(d.n) + float64(shift)) / 1e3,
		P50:   us(d.quantile(50)),
		P90:   us(d.quantile(90)),
		P99:   us(d.quantile(99)),
		P999:  us(d.quantile(99.9)),
		Max:   us(d.max),
	}
}
