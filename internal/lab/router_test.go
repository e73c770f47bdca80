//go:build linux

package lab

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/race"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// TCP through loss, duplication, re-ordering and a rate cap: the router
// splits super-packets into segments with rebuilt headers; every byte must
// arrive intact and in order, and the router must lose nothing it was not
// asked to.
func TestRouterTCPIntegrity(t *testing.T) {
	fwd := impair.Config{Delay: 10 * time.Millisecond, Loss: 0.005, Reorder: 0.005, ReorderGap: 3, Duplicate: 0.005, Rate: 400e6}
	back := impair.Config{Delay: 10 * time.Millisecond, Loss: 0.005}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: fwd, BtoA: back, RandStart: 5}, BigTCPBuffers())
	res := tcpBulk(t, l.Host("a"), l.Host("b"), tcpOpts{Duration: 3 * time.Second, Verify: true})
	st, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	ab := st.AtoB
	t.Logf("goodput %s, %d bytes verified; a→b in %d out %d loss %d queue %d dup %d reordered %d in %d writes; sender retransmits %d",
		mbit(res.Goodput), res.Bytes, ab.Counters.In, ab.Out, ab.DroppedLoss, ab.DroppedQueue, ab.Duplicated, ab.Reordered, ab.Writes, res.Sender.Total_retrans)
	if res.Bytes == 0 || ab.DroppedLoss == 0 || ab.Duplicated == 0 || ab.Reordered == 0 {
		t.Errorf("expected traffic and every impairment: %+v", ab)
	}
	for _, d := range []DirStats{st.AtoB, st.BtoA} {
		if d.WriteErrors != 0 || d.ReadErrors != 0 || d.Oversize != 0 || d.DroppedLimit != 0 || d.TunIn.TxDropped != 0 {
			t.Errorf("unrequested losses: %+v, TUN %+v", d, *d.TunIn)
		}
	}
	if ab.Writes >= ab.Out {
		t.Errorf("no segments were joined: %d writes for %d packets", ab.Writes, ab.Out)
	}
}

// TestRouterCapacity measures what the router carries at 215 ms RTT
// without a rate cap, with 1500- and 9000-byte MTUs: one TCP stream with
// autotuned windows, and a paced UDP stream of 1472-byte datagrams (which
// the router moves one packet per system call). It logs the figures and
// fails only on losses the router was not asked for.
func TestRouterCapacity(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("capacity measurement: skipped with -short and under the race detector")
	}
	one := impair.Config{Delay: 107500 * time.Microsecond}
	for _, mtu := range []int{1500, 9000} {
		l := newRouterLab(t, mtu, RouterSpec{AtoB: one, BtoA: one, RandStart: 9}, BigTCPBuffers())
		res := tcpBulk(t, l.Host("a"), l.Host("b"), tcpOpts{Duration: 8 * time.Second})
		var peak float64
		for _, s := range res.Samples {
			peak = max(peak, float64(s.Delivery_rate)*8)
		}
		st, err := l.RouterStats()
		if err != nil {
			t.Fatal(err)
		}
		ab := st.AtoB
		t.Logf("MTU %d, 215 ms, TCP: goodput %s over %v (slow start included), peak delivery rate %s; a→b %d packets in %d writes, retransmits %d, TUN tx_dropped %d",
			mtu, mbit(res.Goodput), res.Elapsed.Round(time.Millisecond), mbit(peak), ab.Out, ab.Writes,
			res.Sender.Total_retrans, ab.TunIn.TxDropped)
		if ab.Lost() != 0 || ab.WriteErrors != 0 {
			t.Errorf("MTU %d: router lost %d packets it was not asked to drop: %+v", mtu, ab.Lost(), ab)
		}
		l.Close()
	}
	// UDP: one packet per read and per write.
	for _, pps := range []int{40000, 85000} {
		l := newRouterLab(t, 1500, RouterSpec{AtoB: one, BtoA: one, RandStart: 9}, nil)
		start := time.Now()
		res := udpStream(t, l.Host("a"), l.Host("b"), 2*pps, 1472, pps, 400*time.Millisecond)
		el := time.Since(start) - 400*time.Millisecond
		ab := settledStats(t, l, res.Sent).AtoB
		t.Logf("MTU 1500, 215 ms, UDP offered %d pps (%s of IP): sent %d in %v, received %d (%s), router out %d, TUN tx_dropped %d, receiver RcvbufErrors %d",
			pps, mbit(float64(pps)*1500*8), res.Sent, el.Round(time.Millisecond), res.Received,
			mbit(float64(res.Received)*1500*8/el.Seconds()), ab.Out, ab.TunIn.TxDropped, res.RcvbufErrors)
		if res.Lost != ab.Lost()+res.RcvbufErrors {
			t.Errorf("UDP %d pps: lost %d, but router drops %d + RcvbufErrors %d", pps, res.Lost, ab.Lost(), res.RcvbufErrors)
		}
		l.Close()
	}
}
