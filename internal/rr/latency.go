package rr

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// Histogram geometry, in ns: 1 ns to 100 s. The RTT histograms keep three
// significant digits (a bucket is at most 0.1 % wide: 20 ns at 20 µs);
// the others two (under 1 %). Longer values count as the maximum; the
// exact extremes are kept beside.
const (
	histMax      = int64(100 * time.Second)
	rttDigits    = 3
	otherDigits  = 2
	histogramsUs = "us"
)

func newHist(digits int) *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, digits) }

func record(h *hdrhistogram.Histogram, v int64) {
	_ = h.RecordValue(min(max(v, 1), histMax))
}

// HistogramOf turns an HDR histogram of values worth unitNs ns each into
// the result's sparse form, in µs, every value moved by shiftNs.
func HistogramOf(h *hdrhistogram.Histogram, unitNs, shiftNs float64) *result.Histogram {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	out := &result.Histogram{Unit: histogramsUs, Count: h.TotalCount()}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		out.Buckets = append(out.Buckets, result.HistogramBucket{
			From:  (float64(b.From)*unitNs + shiftNs) / 1e3,
			To:    (float64(b.To)*unitNs + shiftNs) / 1e3,
			Count: b.Count,
		})
	}
	return out
}

// accumulator gathers one point's transactions.
type accumulator struct {
	label     string
	req, resp int

	sent, completed, lost, late, errors int64
	first, last                         time.Time // first send, last completion

	rtt, network, server *hdrhistogram.Histogram // ns
	fwd, back            *stats.Signed           // raw T2 − T1 and T4 − T3, ns
	// best is the exchange with the smallest network RTT, for the
	// clock offset estimate from the transactions themselves.
	best    stats.OffsetSample
	bestRTT int64
	spacing *result.Spacing
}

func newAccumulator(label string, req, resp int) *accumulator {
	return &accumulator{
		label: label, req: req, resp: resp,
		rtt: newHist(rttDigits), network: newHist(rttDigits), server: newHist(otherDigits),
		fwd: stats.NewSigned(), back: stats.NewSigned(), bestRTT: -1,
	}
}

// sample is one completed transaction: the four times (T1 and T4 on the
// client's wall clock, T2 and T3 on the server's) and the RTT from the
// client's monotonic clock.
type sample struct {
	t1, t2, t3, t4 int64
	rtt            time.Duration
	done           time.Time
}

func (a *accumulator) add(s sample) {
	a.completed++
	a.last = s.done
	rtt := int64(s.rtt)
	srv := max(s.t3-s.t2, 0)
	netRTT := max(rtt-srv, 0)
	record(a.rtt, rtt)
	record(a.network, netRTT)
	record(a.server, srv)
	a.fwd.Record(s.t2 - s.t1)
	a.back.Record(s.t4 - s.t3)
	if s.t3 >= s.t2 && (a.bestRTT < 0 || netRTT < a.bestRTT) {
		a.best, a.bestRTT = stats.OffsetSample{T1: s.t1, T2: s.t2, T3: s.t3, T4: s.t4}, netRTT
	}
}

// point reports the accumulator; offsetNs is the server's clock minus
// the client's, applied to the one-way delays when haveOffset.
func (a *accumulator) point(offsetNs int64, haveOffset bool) result.RRPoint {
	p := result.RRPoint{
		Label: a.label, RequestSize: a.req, ResponseSize: a.resp,
		Sent: a.sent, Completed: a.completed, Lost: a.lost, Late: a.late, Errors: a.errors,
		RTT:        stats.Summarize(a.rtt, 1),
		NetworkRTT: stats.Summarize(a.network, 1),
		ServerTime: stats.Summarize(a.server, 1),
		Spacing:    a.spacing,
	}
	if !a.first.IsZero() && a.last.After(a.first) {
		p.Seconds = a.last.Sub(a.first).Seconds()
		p.TransactionsPerSecond = float64(a.completed) / p.Seconds
	}
	if a.completed > 0 {
		p.RTTHistogram = HistogramOf(a.rtt, 1, 0)
		p.NetworkRTTHistogram = HistogramOf(a.network, 1, 0)
		if haveOffset {
			p.ForwardOWD = a.fwd.Percentiles(-offsetNs)
			p.BackwardOWD = a.back.Percentiles(offsetNs)
		}
	}
	return p
}
