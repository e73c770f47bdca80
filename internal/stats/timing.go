package stats

import (
	"fmt"
	"math"

	"github.com/wireperf/wireperf/internal/result"
)

// timing computes the delay-variation figures of received datagrams in
// arrival order. Each datagram has a transit figure D = R - S (receive
// minus send time); a fixed clock offset shifts every D alike, so
// differences of D need no clock sync.
//
//   - Jitter (RFC 3550 §A.8): D(i-1,i) = D(i) - D(i-1) over consecutive
//     arrivals, J += (|D(i-1,i)| - J)/16.
//   - IPDV (RFC 5481): the same signed differences, as a distribution.
//     They pair consecutive arrivals, not consecutive sequence numbers, so
//     that IPDV and jitter describe the same pairs.
//   - PDV (RFC 5481): D - min D over the span. Min D is only known at the
//     end, so D is stored relative to the stream's first D (ref), and the
//     report shifts by the span's minimum; with a clock offset, the same
//     values shifted by ref - offset are the absolute one-way delay.
//
// With GRO, the segments after the first of a batch carry the batch's
// receive time, not their own: they have no arrival time, so they take no
// part. A pair is made of two datagrams with their own receive times (the
// heads of consecutive batches).
type timing struct {
	j        float64 // J, ns
	prevD    int64   // D of the last datagram with its own receive time
	havePrev bool
	ref      int64 // D of the stream's first timed datagram
	haveRef  bool
	any      bool // a datagram was received: the next makes a pair
	iv, tot  timingSpan
}

// timingSpan holds the figures of an interval or of the whole stream.
type timingSpan struct {
	pairs    int64 // pairs that fed jitter and IPDV
	pairsAll int64 // consecutive received pairs, usable or not
	shared   int64 // datagrams that carried a shared receive time
	ipdv     signedDist
	delay    signedDist // D - ref
}

func newTiming() timing {
	return timing{
		iv:  timingSpan{ipdv: newSignedDist(), delay: newSignedDist()},
		tot: timingSpan{ipdv: newSignedDist(), delay: newSignedDist()},
	}
}

// add takes one received datagram (not a duplicate, not late).
func (t *timing) add(sentNs, recvNs int64, shared bool) {
	s := &t.iv
	if t.any {
		s.pairsAll++
	}
	t.any = true
	if shared {
		s.shared++
		return
	}
	d := recvNs - sentNs
	if t.havePrev {
		v := d - t.prevD
		t.j += (math.Abs(float64(v)) - t.j) / 16
		s.pairs++
		s.ipdv.record(v)
	}
	t.prevD, t.havePrev = d, true
	if !t.haveRef {
		t.ref, t.haveRef = d, true
	}
	s.delay.record(d - t.ref)
}

// cut closes the interval: its figures join the stream's.
func (t *timing) cut() {
	t.tot.pairs += t.iv.pairs
	t.tot.pairsAll += t.iv.pairsAll
	t.tot.shared += t.iv.shared
	t.tot.ipdv.merge(&t.iv.ipdv)
	t.tot.delay.merge(&t.iv.delay)
	t.iv.pairs, t.iv.pairsAll, t.iv.shared = 0, 0, 0
	t.iv.ipdv.reset()
	t.iv.delay.reset()
}

// clockOffset is the receiver's clock minus the sender's, when known.
type clockOffset struct {
	set             bool
	offset, errorNs int64
}

// fill writes a span's figures into u. source is the configured timestamp
// source.
func (t *timing) fill(u *result.UDP, s *timingSpan, source string, off clockOffset) {
	// J is a running estimate; with no new pair in the span it says
	// nothing about it, and 0 with no samples reads as "n/a".
	if s.pairs > 0 {
		u.JitterMs = t.j / 1e6
		u.JitterSamples = s.pairs
	}
	switch {
	case s.shared > 0:
		u.JitterMethod = fmt.Sprintf("kernel timestamps per GRO batch: %d of %d pairs", s.pairs, s.pairsAll)
	case source == "kernel":
		u.JitterMethod = "kernel timestamps"
	default:
		u.JitterMethod = "user-space clock"
	}
	u.IPDV = s.ipdv.percentiles(0)
	u.PDV = s.delay.percentiles(-s.delay.min)
	if u.PDV == nil {
		return
	}
	u.OWD = &result.OWD{Relative: *u.PDV}
	if off.set {
		u.OWD.Absolute = true
		u.OWD.AbsoluteUs = s.delay.percentiles(t.ref - off.offset)
		u.OWD.OffsetUs = float64(off.offset) / 1e3
		u.OWD.ErrorBoundUs = float64(off.errorNs) / 1e3
	}
}
