package server

import (
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// tailAbove bounds the share of a distribution's values at or above x
// from its reported percentiles (nearest rank, to the histogram's 1%
// precision): 0 if even the maximum is below x, else the share above the
// highest percentile below x, and 1 if none is.
func tailAbove(p *result.Percentiles, x float64) float64 {
	switch {
	case p.Max < x:
		return 0
	case p.P999 < x:
		return 0.001
	case p.P99 < x:
		return 0.01
	case p.P90 < x:
		return 0.1
	case p.P50 < x:
		return 0.5
	}
	return 1
}

// absIPDVShareAbove bounds the share of datagram pairs whose |IPDV| is at
// least x µs, from the receiver's IPDV and PDV percentiles, and says
// whether the bound is proven or rests on symmetry.
//
// The Result gives signed IPDV percentiles, not those of |IPDV|. The upper
// tail, IPDV ≥ x, is at most as common as the IPDV percentiles say. For
// the lower tail, IPDV ≤ −x, there are two bounds:
//
//   - proven: IPDV ≤ −x means D(i−1) − D(i) ≥ x, and since PDV = D − min D
//     is ≥ 0 for both datagrams, that needs PDV(i−1) ≥ x: at most as common
//     as PDV's upper tail. It is loose when one datagram's transit was
//     unusually short, which lifts every PDV by as much (on loopback one
//     such datagram in 10,000 is usual, and PDV's median then sits near
//     5 µs while IPDV's 90th percentile is under 1 µs).
//   - by symmetry: IPDV pairs consecutive datagrams of a stationary delay
//     process, whose differences are as likely to be negative as positive
//     (a datagram delayed by δ shows as +δ and then −δ), so the lower tail
//     is as common as the upper one.
//
// The smaller of the two is used.
func absIPDVShareAbove(u *result.UDP, x float64) (share float64, proven bool) {
	upper := tailAbove(u.IPDV, x)
	lowerProven := tailAbove(u.PDV, x)
	if lowerProven <= upper {
		return min(1, upper+lowerProven), true
	}
	return min(1, 2*upper), false
}

// Issue 4 (f): a paced sender at 100 µs spacing, 10,000 datagrams on
// loopback. The receiver's kernel timestamps show the spacing kept: with a
// fixed send spacing, a pair's IPDV (the change in transit time from one
// datagram to the next) is how far the receive spacing strayed from the
// send spacing, and the median |IPDV| must be below 5 µs. The test
// asserts it through absIPDVShareAbove: fewer than half of the pairs can
// have |IPDV| ≥ 5 µs. It logs the 99th percentile and the sender's own
// figures (achieved mean spacing, and its error against the schedule).
//
// Timing on a shared machine: a test whose process is descheduled for a
// while fails one attempt, so it gets three. Under the race detector the
// figures are logged and not judged: its instrumentation of the send path
// alone moves transit times by several µs (PDV's 90th percentile goes from
// about 1.5 to 5-8 µs on the development VM).
func TestUDPPacedSpacingAtReceiver(t *testing.T) {
	const (
		n       = 10000
		spacing = 100 * time.Microsecond
		limitUs = 5.0
	)
	ts := startServer(t, nil)
	s := udpSpec()
	s.Rate = 0
	s.Spacing = spacing
	s.NoGSO = true // one datagram per send, each with its own receive timestamp
	s.Duration = 0
	s.Bytes = n * int64(s.Length)
	s.Interval = 0
	var last string
	for attempt := 1; attempt <= 3; attempt++ {
		res := mustRun(t, ts, s)
		f := res.Flows()[0]
		if f.Sent == nil || f.Received == nil || f.Sent.UDP == nil || f.Received.UDP == nil {
			t.Fatalf("flow lacks a side's UDP figures: %+v", f)
		}
		sent, got := f.Sent.UDP, f.Received.UDP
		if sent.Sent != n || got.Received != n || got.Lost != 0 {
			t.Fatalf("sent %d, received %d, lost %d; want %d, all of them", sent.Sent, got.Received, got.Lost, n)
		}
		if got.TimestampSource != "kernel" || got.IPDV == nil || got.PDV == nil || sent.Spacing == nil {
			t.Fatalf("want kernel receive timestamps, IPDV, PDV and the sender's spacing; have %q, %v, %v, %v",
				got.TimestampSource, got.IPDV, got.PDV, sent.Spacing)
		}
		share, proven := absIPDVShareAbove(got, limitUs)
		how := "by symmetry"
		if proven {
			how = "proven"
		}
		sp := sent.Spacing
		last = fmt.Sprintf("|IPDV| ≥ %.0f µs in at most %.1f%% of %d pairs (%s); IPDV µs p50 %.2f p90 %.2f p99 %.2f (min %.1f, max %.1f); PDV µs p50 %.2f p90 %.2f p99 %.2f; sender: mean spacing %.0f ns for %v, schedule error p50 %.0f p99 %.0f max %.0f ns",
			limitUs, 100*share, got.IPDV.Count, how, got.IPDV.P50, got.IPDV.P90, got.IPDV.P99, got.IPDV.Min, got.IPDV.Max,
			got.PDV.P50, got.PDV.P90, got.PDV.P99, sp.MeanNs, spacing, sp.ErrP50Ns, sp.ErrP99Ns, sp.ErrMaxNs)
		t.Logf("attempt %d: %s", attempt, last)
		if share < 0.5 {
			return
		}
		if raceBuild() {
			t.Skip("timing accuracy test: the race detector slows the send path; the figures above are for information")
		}
	}
	t.Errorf("median |IPDV| not shown below %.0f µs: %s", limitUs, last)
}

// raceBuild reports whether this test binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
