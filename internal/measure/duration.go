package measure

import (
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// UDPMonPointOverhead is what a udpmon point costs besides its sending:
// its own test's set-up and end exchange with the server. On loopback a
// sweep of 6 points of 1,000 datagrams took 2.9 s for 60 ms of sending,
// about 0.45 s a point; a long path adds a few round trips to each.
const UDPMonPointOverhead = 500 * time.Millisecond

// udpmonFastestGap is the gap assumed for "as fast as possible" (spacing
// 0), the same floor udpmon's point timeout takes.
const udpmonFastestGap = 2 * time.Microsecond

// Duration is how long the test runs, as its flags say: for a client,
// -t with -O before it, or -n's bytes at the rate asked; for rr, each
// size's -t (or --count at --interval), or the three phases of --load;
// for udpmon, every point's datagrams at its spacing and each point's
// overhead; for a trace, every hop waiting its probe timeout; for ping
// and tcp-connect, every interval and the last one's timeout. ok is
// false when the flags don't tell (-n without a rate,
// rr --count without -t or --interval).
func (t Test) Duration() (d time.Duration, ok bool) {
	switch {
	case t.Client != nil:
		return clientDuration(t.Client.Spec)
	case t.RR != nil:
		return rrDuration(t.RR)
	case t.UDPMon != nil:
		return udpmonDuration(t.UDPMon), true
	case t.Trace != nil:
		return traceDuration(t.Trace), true
	case t.Ping != nil:
		return t.Ping.Cfg.Bound(), true
	case t.TCPConnect != nil:
		return t.TCPConnect.Cfg.Bound(), true
	}
	return 0, false
}

// clientDuration: the spec's Duration already holds -O. A test that
// stops at -n bytes ends when they are sent: at a rate (-b per stream,
// --pps or --spacing) that is known; as fast as the path allows it is
// not.
func clientDuration(s spec.Spec) (time.Duration, bool) {
	if s.Duration > 0 {
		return s.Duration, true
	}
	if s.Bytes <= 0 {
		return 0, false
	}
	streams := float64(max(s.Streams, 1))
	var seconds float64
	switch {
	case s.Rate > 0:
		seconds = float64(s.Bytes) * 8 / (s.Rate * streams)
	case s.PPS > 0 && s.Length > 0:
		seconds = float64(s.Bytes) / float64(s.Length) / (float64(s.PPS) * streams)
	case s.Spacing > 0 && s.Length > 0:
		seconds = float64(s.Bytes) / float64(s.Length) / streams * s.Spacing.Seconds()
	default:
		return 0, false
	}
	return time.Duration(seconds * float64(time.Second)), true
}

// rrDuration: each request size is a point of its own.
func rrDuration(f *RR) (time.Duration, bool) {
	s := f.Spec
	if f.Load != "" {
		return s.Duration, true // idle + load + after, one size
	}
	if total := s.RRTotal(); total > 0 {
		return total, true
	}
	if s.RRCount <= 0 || s.RRInterval <= 0 {
		return 0, false
	}
	return time.Duration(max(1, len(s.RRSizeList()))) * time.Duration(s.RRCount) * s.RRInterval, true
}

// udpmonDuration: Count datagrams a point, at its spacing.
func udpmonDuration(f *UDPMon) time.Duration {
	c := f.Cfg
	var d time.Duration
	for range c.Sizes {
		for _, gap := range c.Spacings {
			d += time.Duration(c.Count)*max(gap, udpmonFastestGap) + UDPMonPointOverhead
		}
	}
	return d
}
