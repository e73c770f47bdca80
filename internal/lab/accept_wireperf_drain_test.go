//go:build linux

package lab

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/race"

	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/result"
)

// The receiver's total on a long path: at 19 ms and 622 Mbit/s (the
// router's rate cap, counting Ethernet framing), every full interval reads
// the framing arithmetic, 622 × 1448/1538 = 585.6 Mbit/s. The receiver's
// total must too: its time ends at its last byte, not when the ends
// exchanged their reports, so the drain after the sender stopped (its
// socket buffer and the router's queue emptying) counts only while bytes
// arrive. The total is within 1% of the arithmetic and within 1% of the
// mean of the receiver's own full intervals, less the share of the span
// in which the lab's router stood idle (Arithmetic). The first second (slow start
// at 19 ms: about 85% of the rate) is left out with -O 1, as it would
// otherwise be 1.5% of a 10-second total; -t 5 -O 1 runs 6 s.
func TestAcceptWireperfReceiverDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6-second throughput test; skipped with -short")
	}
	if race.Enabled {
		t.Skip("1% goodput accuracy test; skipped under the race detector")
	}
	const rate = 622e6
	want := TCPGoodput(rate, 1500, FramingEthernet)
	path := impair.Config{Delay: 9500 * time.Microsecond, Rate: rate, Overhead: FramingEthernet.Overhead}
	back := impair.Config{Delay: 9500 * time.Microsecond}
	type figures struct{ fails []string }
	got, ok := bestOf(t, 3, func(attempt int) (figures, bool) {
		l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: back, RandStart: uint64(attempt) + 1}, BigTCPBuffers())
		defer l.Close()
		a, b := l.Host("a"), l.Host("b")
		sp := wpTCPSpec(6 * time.Second)
		sp.Omit = time.Second
		res, idle := wpRunRouterIdle(t, l, a, b, startServer(t, b), sp)
		f := wpFlow(t, res)
		rx := f.Received
		var full []float64
		for _, iv := range res.Remote.SettledIntervals() {
			for _, si := range iv.Streams {
				if si.ID == f.ID && math.Abs(iv.Seconds()-1) < 0.05 && !iv.Omitted { // full, counted
					full = append(full, result.Rate(si.Bytes, iv.Seconds()))
				}
			}
		}
		var mean float64
		for _, r := range full {
			mean += r / float64(len(full))
		}
		total := result.Rate(rx.Bytes, rx.Seconds())
		t.Logf("receiver total %s over %.3f-%.3f s (drain %.3f s; sender's last write at %.3f s), full intervals' mean %s over %d; arithmetic %s; total %+.2f%% of it",
			mbit(total), rx.Start, rx.End, rx.Drain, f.Sent.End, mbit(mean), len(full), mbit(want), 100*(total/want-1))
		fails := append(checkRate("client→server", "the arithmetic", total, rx.Seconds(), want, idle),
			checkRate("client→server", "its full intervals' mean", total, rx.Seconds(), mean, idle)...)
		for _, f := range fails {
			t.Log(f)
		}
		return figures{fails}, len(fails) == 0
	})
	if !ok {
		t.Errorf("receiver total: want within 1%% of the arithmetic %s and of its full intervals' mean, less the router's idle share:\n%s",
			mbit(want), strings.Join(got.fails, "\n"))
	}
}

// With -R the client receives, and the server's first byte reaches it a
// round trip after the client's clock started: the receiver's span starts
// at that first byte, so the RTT is not counted as time without data.
func TestAcceptWireperfReverseFirstByte(t *testing.T) {
	const rtt = 19 * time.Millisecond
	path := impair.Config{Delay: rtt / 2, Rate: 622e6, Overhead: FramingEthernet.Overhead}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: path, RandStart: 7}, BigTCPBuffers())
	a, b := l.Host("a"), l.Host("b")
	sp := wpTCPSpec(2 * time.Second)
	sp.Reverse = true
	res := wpRun(t, a, b, startServer(t, b), sp, nil)
	rx := wpFlow(t, res).Received
	t.Logf("client receiving: span %.3f-%.3f s, drain %.3f s", rx.Start, rx.End, rx.Drain)
	if rx.Start < (rtt * 3 / 4).Seconds() {
		t.Errorf("the receiver's span starts at %.3f s, before the first byte could arrive (RTT %v)", rx.Start, rtt)
	}
}
