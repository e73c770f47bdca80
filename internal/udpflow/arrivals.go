package udpflow

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
)

// arrivals keeps a receiver's arrival times: the first and the last, and
// the gaps between consecutive arrivals that have their own receive time
// (a GRO batch's later segments share its time and are left out). Guarded
// by the receiver's mu.
type arrivals struct {
	n, first, last, prev int64
	havePrev             bool
	gaps                 *hdrhistogram.Histogram // ns
}

// Inter-arrival histogram geometry: 1 ns to 100 s, two significant
// digits (buckets under 1 % wide).
const (
	gapMax    = 100e9
	gapDigits = 2
)

func (a *arrivals) add(recvNs int64, shared bool) {
	if a.n == 0 || recvNs < a.first {
		a.first = recvNs
	}
	a.last = max(a.last, recvNs)
	a.n++
	if shared {
		return
	}
	if a.havePrev {
		_ = a.gaps.RecordValue(min(max(recvNs-a.prev, 0), gapMax))
	}
	a.prev, a.havePrev = recvNs, true
}

// EnableArrivals has the receiver keep arrival figures (Arrivals). Call
// it before Start.
func (r *Receiver) EnableArrivals() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.arr = &arrivals{gaps: hdrhistogram.New(1, gapMax, gapDigits)}
}

// Arrivals reports the arrival figures over the whole stream, with the
// relative one-way delay histogram once Final has run; ok is false when
// EnableArrivals was not called. StreamID is left to the caller.
func (r *Receiver) Arrivals() (result.UDPArrivals, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.arr
	if a == nil {
		return result.UDPArrivals{}, false
	}
	out := result.UDPArrivals{
		Received: a.n, FirstNs: a.first, LastNs: a.last,
		TimestampSource: "user-space",
		RelativeOWD:     r.stats.RelativeDelayHistogram(),
	}
	if r.io.features().KernelTimestamps {
		out.TimestampSource = "kernel"
	}
	if a.gaps.TotalCount() > 0 {
		h := &result.Histogram{Unit: "us", Count: a.gaps.TotalCount()}
		for _, b := range a.gaps.Distribution() {
			if b.Count > 0 {
				h.Buckets = append(h.Buckets, result.HistogramBucket{From: float64(b.From) / 1e3, To: float64(b.To) / 1e3, Count: b.Count})
			}
		}
		out.InterArrival = h
	}
	return out, true
}
