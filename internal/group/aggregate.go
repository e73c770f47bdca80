package group

import (
	"math"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// pairInterval is one of a pair's intervals on the common time base.
type pairInterval struct {
	start, end float64 // seconds since the common start
	bytes      int64   // received in the interval
}

// receivedIntervals are a pair's non-omitted intervals, shifted by its
// actual start's distance from the common instant.
func receivedIntervals(common time.Time, p PairReport) []pairInterval {
	if p.Result == nil || p.StartedAt.IsZero() {
		return nil
	}
	shift := p.StartedAt.Sub(common).Seconds()
	var out []pairInterval
	for _, row := range p.Result.IntervalRows() {
		if row.Omitted {
			continue
		}
		var b int64
		for _, role := range []string{result.RoleClient, result.RoleServer} {
			b += row.SumDirection(role).ReceivedBytes
		}
		out = append(out, pairInterval{start: row.Start + shift, end: row.End + shift, bytes: b})
	}
	return out
}

// Aggregate adds the pairs up on the common time base: bins of the first
// pair's interval length from the common start instant, each pair's
// interval spread over the bins it overlaps in proportion to the
// overlap. The total is the sum of the pairs' received rates.
func Aggregate(common time.Time, pairs []PairReport) Sum {
	sum := Sum{Intervals: []SumInterval{}}
	var width float64
	var ivs [][]pairInterval
	last := 0.0
	for _, p := range pairs {
		if p.Result == nil {
			continue
		}
		for _, d := range p.Result.Directions() {
			sum.ReceivedBitsPerSecond += d.Received.BitsPerSecond()
		}
		if width == 0 {
			width = p.Result.Spec.Interval.Seconds()
		}
		pi := receivedIntervals(common, p)
		for _, iv := range pi {
			last = math.Max(last, iv.end)
		}
		ivs = append(ivs, pi)
	}
	if width <= 0 || last <= 0 {
		return sum
	}
	n := int(math.Ceil(last/width - 1e-9))
	bytes := make([]float64, n)
	for _, pi := range ivs {
		for _, iv := range pi {
			span := iv.end - iv.start
			if span <= 0 {
				continue
			}
			for k := max(0, int(math.Floor(iv.start/width))); k < n && float64(k)*width < iv.end; k++ {
				overlap := math.Min(iv.end, float64(k+1)*width) - math.Max(iv.start, float64(k)*width)
				if overlap > 0 {
					bytes[k] += float64(iv.bytes) * overlap / span
				}
			}
		}
	}
	for k := range n {
		start, end := float64(k)*width, math.Min(float64(k+1)*width, last)
		if end <= start {
			continue
		}
		sum.Intervals = append(sum.Intervals, SumInterval{Start: start, End: end, ReceivedBitsPerSecond: bytes[k] * 8 / (end - start)})
	}
	return sum
}

// StartSkew is the spread of the pairs' starts on the controller's clock.
// Its uncertainty adds the offset uncertainties of the earliest and the
// latest pair, each known only within its own bound.
func StartSkew(pairs []PairReport) Skew {
	first, lastI := -1, -1
	for i, p := range pairs {
		if p.StartedAt.IsZero() || p.Clock == nil {
			continue
		}
		if first < 0 || p.StartedAt.Before(pairs[first].StartedAt) {
			first = i
		}
		if lastI < 0 || p.StartedAt.After(pairs[lastI].StartedAt) {
			lastI = i
		}
	}
	if first < 0 {
		return Skew{}
	}
	unc := pairs[first].Clock.UncertaintyNs
	if lastI != first {
		unc += pairs[lastI].Clock.UncertaintyNs
	}
	return Skew{
		Seconds:            pairs[lastI].StartedAt.Sub(pairs[first].StartedAt).Seconds(),
		UncertaintySeconds: time.Duration(unc).Seconds(),
	}
}
