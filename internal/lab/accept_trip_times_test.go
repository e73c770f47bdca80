//go:build linux

package lab

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// TestAcceptTripTimes19ms: --trip-times over the 19 ms path (9.5 ms each
// way, 622 Mbit/s). The namespaces share one clock, so the figures are
// true one-way delays, and every block is timed (-n 40 blocks of 8 KiB:
// 320 KiB, so the test is bounded in bytes as well as by wpRun's
// deadline).
//
// A block's write-to-read latency holds the time it waited in the
// sender's socket buffer for the window, which in slow start is round
// trips: only the first block, written to an empty buffer and within
// the initial window (10 segments), goes at once. So the fastest block
// must take at least the path's 9.5 ms, and less than 9.5 ms plus the
// queue's drain time (its limit and the block, at the rate) plus the
// router's worst lateness, as it measured it.
func TestAcceptTripTimes19ms(t *testing.T) {
	const rate, blockLen, blocks, queue = 622e6, 8 << 10, 40, 256 << 10
	path := impair.Config{Delay: 9500 * time.Microsecond, Rate: rate, Overhead: FramingEthernet.Overhead, QueueLimit: queue}
	back := impair.Config{Delay: 9500 * time.Microsecond}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: back, RandStart: 3}, BigTCPBuffers())
	a, b := l.Host("a"), l.Host("b")
	sp := wpTCPSpec(0)
	sp.Bytes = blocks * blockLen
	sp.Length = blockLen
	sp.TripTimes = true
	res := wpRun(t, a, b, startServer(t, b), sp, nil)
	st, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	rx := wpFlow(t, res).Received
	tt := rx.TripTimes
	if tt == nil {
		t.Fatal("the receiver reported no trip times")
	}
	wire := queue + blockLen + (blockLen/1448+1)*FramingEthernet.Overhead
	drain := time.Duration(float64(wire) * 8 / rate * float64(time.Second))
	late := time.Duration(st.AtoB.MaxLateUs) * time.Microsecond
	upper := path.Delay + drain + late
	t.Logf("trip times over %d blocks: min %.3f ms, mean %.3f, max %.3f, stdev %.3f; the fastest block's bound [%v, %v) (queue drain %v, router's worst lateness %v)",
		tt.Count, tt.MinUs/1e3, tt.MeanUs/1e3, tt.MaxUs/1e3, tt.StdevUs/1e3, path.Delay, upper, drain, late)
	if tt.Count != blocks || tt.BadBlocks != 0 || tt.Negative != 0 {
		t.Fatalf("timed %d blocks (%d bad, %d negative), want %d", tt.Count, tt.BadBlocks, tt.Negative, blocks)
	}
	if tt.MinUs < float64(path.Delay.Microseconds()) {
		t.Errorf("fastest block %.3f ms, under the path's one-way delay %v", tt.MinUs/1e3, path.Delay)
	}
	if tt.MinUs >= float64(upper.Microseconds()) {
		t.Errorf("fastest block %.3f ms, not below %v", tt.MinUs/1e3, upper)
	}
}
