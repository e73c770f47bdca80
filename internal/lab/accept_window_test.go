//go:build linux

package lab

import (
	"math"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// path215 is 215 ms RTT with a 1 Gbit/s rate cap each way (IP bytes).
func path215() impair.Config {
	return impair.Config{Delay: 107500 * time.Microsecond, Rate: 1e9}
}

// Acceptance test 2, first half: at 215 ms and 1 Gbit/s, a stream whose
// receiver asks for a 32 KiB buffer (the kernel doubles it to 64 KiB) gets
// at most 64 KiB ÷ RTT = 2.44 Mbit/s (+15%), and its goodput matches the
// advertised window ÷ RTT (TCP_INFO snd_wnd and rtt, on the sender) within
// 15%. Only the receive buffer is set: the window is what is under test,
// and a 64 KiB send buffer would limit the sender further, below the window.
func TestAcceptWindowLimited(t *testing.T) {
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path215(), BtoA: path215(), RandStart: 2}, BigTCPBuffers())
	res := tcpBulk(t, l.Host("a"), l.Host("b"), tcpOpts{Duration: 5 * time.Second, RcvBuf: 32 << 10})
	const ceiling = 65536 * 8 / 0.215
	wnd, rtt, n := meanWindowRTT(res.Samples, func(s tcpInfo) (uint64, uint32) { return uint64(s.Snd_wnd), s.Rtt })
	if n == 0 {
		t.Fatal("no TCP_INFO samples with a window")
	}
	predicted := wnd * 8 / rtt
	t.Logf("goodput %s; mean advertised window %.0f B, mean RTT %.1f ms → window/RTT %s; ceiling 64 KiB/215 ms %s; rwnd-limited %d of %d µs busy",
		mbit(res.Goodput), wnd, rtt*1e3, mbit(predicted), mbit(ceiling), res.Sender.Rwnd_limited, res.Sender.Busy_time)
	if res.Goodput > ceiling*1.15 {
		t.Errorf("goodput %s above 64 KiB/RTT %s + 15%%", mbit(res.Goodput), mbit(ceiling))
	}
	if math.Abs(res.Goodput-predicted) > 0.15*predicted {
		t.Errorf("goodput %s is not within 15%% of window/RTT %s", mbit(res.Goodput), mbit(predicted))
	}
}

// Acceptance test 2, second half: with windows at least the BDP (TCP
// autotuning with net.ipv4.tcp_rmem and tcp_wmem raised inside the
// namespaces; net.core.rmem_max is global and left alone) one stream goes
// above 300 Mbit/s in a 10-second test over the same path.
func TestAcceptWindowBDP(t *testing.T) {
	if testing.Short() {
		t.Skip("10-second throughput test; skipped with -short")
	}
	goodput, ok := bestOf(t, 2, func(int) (float64, bool) {
		l := newRouterLab(t, 1500, RouterSpec{AtoB: path215(), BtoA: path215(), RandStart: 3}, BigTCPBuffers())
		defer l.Close()
		a := l.Host("a")
		cc, _ := a.ReadSysctl("net.ipv4.tcp_congestion_control")
		rmem, _ := l.Host("b").ReadSysctl("net.ipv4.tcp_rmem")
		res := tcpBulk(t, a, l.Host("b"), tcpOpts{Duration: 10 * time.Second})
		st, err := l.RouterStats()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("goodput %s over %v (%s, tcp_rmem %q); max snd_wnd %d B; retransmits %d; router a→b queue drops %d, TUN tx_dropped %d",
			mbit(res.Goodput), res.Elapsed.Round(time.Millisecond), cc, rmem, maxSndWnd(res.Samples),
			res.Sender.Total_retrans, st.AtoB.DroppedQueue, st.AtoB.TunIn.TxDropped)
		if st.AtoB.TunIn.TxDropped != 0 || st.AtoB.WriteErrors != 0 || st.AtoB.DroppedLimit != 0 {
			t.Errorf("losses the router was not asked for: %+v", st.AtoB)
		}
		return res.Goodput, res.Goodput > 300e6
	})
	if !ok {
		t.Errorf("goodput %s, want above 300 Mbit/s", mbit(goodput))
	}
}

func maxSndWnd(ss []tcpInfo) uint32 {
	var m uint32
	for _, s := range ss {
		m = max(m, s.Snd_wnd)
	}
	return m
}
