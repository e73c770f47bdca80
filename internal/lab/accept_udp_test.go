//go:build linux

package lab

import (
	"slices"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// Acceptance test 4: UDP ground truth. A sequence-numbered UDP stream
// crosses the router; what the receiver counts equals what the router
// did: lost = router drops (+ the receiver's RcvbufErrors), re-ordered =
// router re-orderings (RFC 4737), duplicates = router duplications.
func TestAcceptUDPGroundTruth(t *testing.T) {
	const (
		n    = 20000
		size = 200
		pps  = 10000
	)
	cases := []struct {
		name string
		cfg  impair.Config
	}{
		{"loss 1%", impair.Config{Delay: 5 * time.Millisecond, Loss: 0.01}},
		{"reorder 1% gap 3", impair.Config{Delay: 5 * time.Millisecond, Reorder: 0.01, ReorderGap: 3}},
		{"duplicate 1%", impair.Config{Delay: 5 * time.Millisecond, Duplicate: 0.01}},
		{"everything", impair.Config{Delay: 5 * time.Millisecond, Jitter: 300 * time.Microsecond, Loss: 0.005,
			GE: impair.Gilbert(0.002, 0.3), Reorder: 0.005, ReorderGap: 2, Duplicate: 0.005,
			Rate: 14e6, QueueLimit: 4000}},
		{"jitter re-orders", impair.Config{Delay: 5 * time.Millisecond, Jitter: 200 * time.Microsecond, Distribution: impair.Normal}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newRouterLab(t, 1500, RouterSpec{AtoB: tc.cfg, RandStart: 42}, nil)
			res := udpStream(t, l.Host("a"), l.Host("b"), n, size, pps, 300*time.Millisecond)
			r := settledStats(t, l, res.Sent).AtoB
			t.Logf("receiver: sent %d received %d lost %d dup %d reordered %d rcvbuf_errors %d", res.Sent, res.Received,
				res.Lost, res.Duplicates, res.Reordered, res.RcvbufErrors)
			t.Logf("router:   in %d out %d dropped loss %d queue %d limit %d dup %d reordered %d held %d; TUN tx_dropped %d; write errors %d",
				r.Counters.In, r.Out, r.DroppedLoss, r.DroppedQueue, r.DroppedLimit, r.Duplicated, r.Reordered, r.Held, r.TunIn.TxDropped, r.WriteErrors)
			if r.Counters.In != n {
				t.Errorf("router saw %d packets, the sender sent %d", r.Counters.In, n)
			}
			if res.Lost != r.Lost()+res.RcvbufErrors {
				t.Errorf("lost %d != router drops %d + RcvbufErrors %d", res.Lost, r.Lost(), res.RcvbufErrors)
			}
			if res.Duplicates != r.Duplicated {
				t.Errorf("duplicates %d != router's %d", res.Duplicates, r.Duplicated)
			}
			if res.RcvbufErrors == 0 && res.Reordered != r.Reordered {
				t.Errorf("re-ordered %d != router's %d", res.Reordered, r.Reordered)
			}
			if !r.Counters.Balanced() || r.QueuedPackets != 0 {
				t.Errorf("router counters do not balance: %+v", r.Counters)
			}
			if tc.cfg.Loss > 0 && r.DroppedLoss == 0 || tc.cfg.Reorder > 0 && r.Reordered == 0 ||
				tc.cfg.Duplicate > 0 && r.Duplicated == 0 || tc.cfg.Jitter > 0 && !tc.cfg.KeepOrder && r.Reordered == 0 {
				t.Errorf("the impairment did not happen: %+v", r.Counters)
			}
		})
	}
}

// The same start and the same packets give the same losses, run after run.
func TestRouterRepeatable(t *testing.T) {
	cfg := impair.Config{Delay: 2 * time.Millisecond, Loss: 0.02, GE: impair.Gilbert(0.01, 0.4)}
	var runs [][]uint64
	for i := 0; i < 2; i++ {
		l := newRouterLab(t, 1500, RouterSpec{AtoB: cfg, RandStart: 7}, nil)
		res := udpStream(t, l.Host("a"), l.Host("b"), 5000, 100, 10000, 200*time.Millisecond)
		if res.RcvbufErrors != 0 {
			t.Skipf("receiver dropped %d datagrams; the comparison needs none", res.RcvbufErrors)
		}
		runs = append(runs, res.Missing)
		l.Close()
	}
	t.Logf("lost %d and %d datagrams", len(runs[0]), len(runs[1]))
	if len(runs[0]) == 0 || !slices.Equal(runs[0], runs[1]) {
		t.Errorf("two runs with start 7 lost different datagrams: %d vs %d", len(runs[0]), len(runs[1]))
	}
}
