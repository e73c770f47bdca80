package group

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// pairInterval is one of a pair's intervals on the common time base.
type pairInterval struct {
	start, end float64 // seconds since the common start
	bytes      int64   // received in the interval
	omitted    bool    // in the omitted start (-O)
}

// receivedIntervals are a pair's receiving rows, the omitted start's and
// the tail too, each over its receiving end's own span, shifted by the
// pair's actual start's distance from the common instant. A receiving
// server's clock starts when the start message reaches it, a one-way
// delay after the pair's start: its spans are shifted by half the
// control connection's round trip as well (at 215 ms, 107 ms), so that
// [SUM] adds what arrived over the same time. A row's
// bytes are never spread over another end's span: the receiver's tail
// after the sender stopped (its socket buffer draining at the path's
// rate) can last far longer than the sender's.
func receivedIntervals(common time.Time, p PairReport) []pairInterval {
	if p.Result == nil || p.StartedAt.IsZero() {
		return nil
	}
	shift := p.StartedAt.Sub(common).Seconds()
	oneWay := p.Result.ControlRTT.Seconds() / 2
	var out []pairInterval
	for _, row := range p.Result.IntervalRows() {
		type placed struct {
			span  result.Span
			delay float64
		}
		byPlace := map[placed]int64{}
		var places []placed
		for _, f := range row.Flows {
			if f.Received == nil {
				continue
			}
			pl := placed{span: f.ReceivedSpan}
			if f.SenderRole == result.RoleClient { // the server receives
				pl.delay = oneWay
			}
			if _, ok := byPlace[pl]; !ok {
				places = append(places, pl)
			}
			byPlace[pl] += f.Received.Bytes
		}
		for _, pl := range places {
			at := shift + pl.delay
			out = append(out, pairInterval{start: pl.span.Start + at, end: pl.span.End + at, bytes: byPlace[pl], omitted: row.Omitted})
		}
	}
	return out
}

// binEdges are the common time base's cuts up to last: every width from
// the start, with one at the end of the omitted start, as a pair's own
// intervals are cut, so that no bin straddles the omitted start's end.
func binEdges(width, omit, last float64) []float64 {
	const eps = 1e-9
	edges := []float64{0}
	for at := 0.0; at < last-eps; {
		switch next := at + width; {
		case at < omit-eps && next > omit+eps:
			at = omit
		default:
			at = next
		}
		edges = append(edges, math.Min(at, last))
	}
	// A last bin shorter than a tenth of the width (the receivers' drain
	// past the last full interval) joins the one before it, as a pair's
	// own report puts such a tail in its totals: no rate over a sliver.
	if n := len(edges); n > 2 && last-edges[n-2] < width/10 && math.Abs(edges[n-2]-omit) > eps {
		edges = append(edges[:n-2], last)
	}
	return edges
}

// Aggregate adds the pairs up on the common time base: bins of the first
// pair's interval length from the common start instant (cut at the end of
// its omitted start), each pair's interval spread over the bins it
// overlaps in proportion to the overlap. The bins inside the omitted
// start are marked omitted, as iperf3 marks its omitted rows. The total
// is the sum of the pairs' received rates, which leave the omitted start
// out.
func Aggregate(common time.Time, pairs []PairReport) Sum {
	sum := Sum{Intervals: []SumInterval{}}
	var width, omit float64
	var ivs [][]pairInterval
	last := 0.0
	for _, p := range pairs {
		if p.Result == nil {
			continue
		}
		for _, d := range p.Result.Directions() {
			sum.ReceivedBitsPerSecond += d.Received.BitsPerSecond()
		}
		if p.StartedAt.IsZero() {
			why := "its agent reported no start time"
			if p.Clock == nil {
				why = "its agent's clock offset is unknown"
			}
			sum.LeftOut = append(sum.LeftOut, fmt.Sprintf("%s: %s, so its rows cannot be placed on the controller's clock", p.Pair.Name(), why))
			continue
		}
		if width == 0 {
			width, omit = p.Result.Spec.Interval.Seconds(), p.Result.Spec.Omit.Seconds()
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
	edges := binEdges(width, omit, last)
	n := len(edges) - 1
	bytes := make([]float64, n)
	for _, pi := range ivs {
		for _, iv := range pi {
			span := iv.end - iv.start
			if span <= 0 {
				continue
			}
			// The first bin that ends after the interval starts.
			k := max(0, sort.SearchFloat64s(edges, iv.start)-1)
			for ; k < n && edges[k] < iv.end; k++ {
				overlap := math.Min(iv.end, edges[k+1]) - math.Max(iv.start, edges[k])
				if overlap > 0 {
					bytes[k] += float64(iv.bytes) * overlap / span
				}
			}
		}
	}
	for k := range n {
		start, end := edges[k], edges[k+1]
		if end <= start {
			continue
		}
		sum.Intervals = append(sum.Intervals, SumInterval{Start: start, End: end,
			ReceivedBitsPerSecond: bytes[k] * 8 / (end - start), Omitted: end <= omit+1e-9})
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
