//go:build linux

package lab

import (
	"math"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// Acceptance test 1: at 215 ms emulated RTT, the RTT a TCP stream measures
// (TCP_INFO min_rtt) is within ±2 ms of 215 ms.
func TestAcceptDelay(t *testing.T) {
	const rtt = 215 * time.Millisecond
	one := impair.Config{Delay: rtt / 2}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: one, BtoA: one, RandStart: 1}, BigTCPBuffers())
	res := tcpBulk(t, l.Host("a"), l.Host("b"), tcpOpts{Duration: 3 * time.Second, MaxBytes: 64 << 20})
	minRTT := time.Duration(res.Sender.Min_rtt) * time.Microsecond
	t.Logf("min_rtt %v, srtt %v, goodput %s, %d bytes", minRTT,
		time.Duration(res.Sender.Rtt)*time.Microsecond, mbit(res.Goodput), res.Bytes)
	if d := minRTT - rtt; math.Abs(float64(d)) > float64(2*time.Millisecond) {
		t.Errorf("min_rtt %v is not within ±2 ms of %v", minRTT, rtt)
	}
	st, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		s    DirStats
	}{{"a→b", st.AtoB}, {"b→a", st.BtoA}} {
		c := d.s.Counters
		t.Logf("%s: in %d out %d delayed %d writes %d, TUN tx_dropped %d", d.name, c.In, c.Out, c.Delayed, d.s.Writes, d.s.TunIn.TxDropped)
		if c.In == 0 || c.Delayed != c.In || d.s.Lost() != 0 || !c.Balanced() {
			t.Errorf("%s: every packet should be delayed and none lost: %+v", d.name, d.s)
		}
	}
}
