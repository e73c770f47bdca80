//go:build linux

package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/race"

	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// TestTruthSubset is the two-minute part of the truth matrix
// (bench/truth.sh, docs/truth.md): on the lab's 19 ms, 622 Mbit/s path
// every row of every test is held to the path's capacity, the rows add up
// to the totals, the receiver's total to the framing arithmetic after -O,
// and UDP's loss to the router's own drops. The full matrix adds 0.2 and
// 215 ms, 100m and 1g, and a CPU hog beside it.
func TestTruthSubset(t *testing.T) {
	if testing.Short() {
		t.Skip("the truth subset runs about a minute of tests; skipped with -short")
	}
	if race.Enabled {
		t.Skip("rates checked to 1-2%; skipped under the race detector")
	}
	const rate = 622e6
	capacity := TCPGoodput(rate, 1500, FramingEthernet) // 585.6 Mbit/s
	path := impair.Config{Delay: 9500 * time.Microsecond, Rate: rate, Overhead: FramingEthernet.Overhead}
	both := map[string]float64{result.RoleClient: capacity, result.RoleServer: capacity}
	tcp := func(d time.Duration, edit func(*spec.Spec)) spec.Spec {
		s := wpTCPSpec(d)
		s.Congestion = "cubic" // BBR's ProbeRTT (200 ms every 10 s) costs 2% by design
		edit(&s)
		return s
	}
	cells := []struct {
		name   string
		sp     spec.Spec
		wantBy []string // the sender roles whose receiver total is held to the arithmetic
	}{
		{"-t 5 -O 1", tcp(5*time.Second, func(s *spec.Spec) { s.Omit = time.Second }), []string{result.RoleClient}},
		{"-P 4 -t 3", tcp(3*time.Second, func(s *spec.Spec) { s.Streams = 4 }), nil},
		{"-R -t 3 -O 1", tcp(3*time.Second, func(s *spec.Spec) { s.Reverse, s.Omit = true, time.Second }), []string{result.RoleServer}},
		{"--bidir -t 3", tcp(3*time.Second, func(s *spec.Spec) { s.Bidir = true }), nil},
	}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: path, RandStart: 11}, BigTCPBuffers())
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)
	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			var fails []string
			_, ok := bestOf(t, 2, func(int) (struct{}, bool) {
				var res *result.Result
				want := map[string]Arithmetic{}
				if len(c.wantBy) > 0 {
					var idle time.Duration
					res, idle = wpRunRouterIdle(t, l, a, b, port, c.sp)
					for _, role := range c.wantBy {
						want[role] = Arithmetic{Rate: capacity, RouterIdle: idle}
					}
				} else {
					res = wpRun(t, a, b, port, c.sp, nil)
				}
				fails = append(CheckRows(res, both), CheckAddsUp(res)...)
				fails = append(fails, CheckTotal(res, want)...)
				for _, d := range res.Directions() {
					t.Logf("%s: receiver total %s over %.2f s", d.Label(), mbit(d.Received.BitsPerSecond()), d.Received.Seconds)
				}
				for _, f := range fails {
					t.Log(f)
				}
				return struct{}{}, len(fails) == 0
			})
			if !ok {
				t.Errorf("the figures are not the path's:\n%s", strings.Join(fails, "\n"))
			}
		})
	}
}

// TestTruthUDPLoss: a UDP test at 90% of a 100 Mbit/s path that drops
// 0.5% at random counts exactly the router's drops as lost, and no
// datagram as another's (the client's hellos among them).
func TestTruthUDPLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-second UDP test; skipped with -short")
	}
	path := impair.Config{Delay: 9500 * time.Microsecond, Rate: 100e6, Overhead: FramingEthernet.Overhead, Loss: 0.005}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: impair.Config{Delay: 9500 * time.Microsecond}, RandStart: 3}, nil)
	wpBypassRouterForTCP(t, l)
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)
	sp := wpUDPSpec(3 * time.Second)
	sp.Rate = 0.9 * Goodput(100e6, 1500, 28, FramingEthernet)
	before, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	res := wpRun(t, a, b, port, sp, nil)
	after, err := wpQuiescentAtoB(l, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	d := wpMinus(after, before.AtoB)
	drops := int64(d.Lost())
	fails := CheckUDPLoss(res, map[string]int64{result.RoleClient: drops})
	fails = append(fails, CheckAddsUp(res)...)
	fails = append(fails, CheckNoFalseWarnings(res)...)
	t.Logf("router: %d in, %d dropped (loss %d, queue %d)", d.In, drops, d.DroppedLoss, d.DroppedQueue)
	if drops == 0 {
		t.Error("the router dropped nothing: the check compared nothing")
	}
	if len(fails) > 0 {
		t.Errorf("the figures are not the path's:\n%s", strings.Join(fails, "\n"))
	}
}
