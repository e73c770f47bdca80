package udpmon_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/udpmonfake"
	"github.com/wireperf/wireperf/internal/udpmon"
)

func TestPointWireArithmetic(t *testing.T) {
	cfg := udpmon.Plan{Count: 1000}
	s := cfg.Spec(1472, 12*time.Microsecond)
	if s.Bytes != 1472*1000 || s.Duration != 0 || !s.HostCounters || !s.UDPHistograms || s.Spacing != 12*time.Microsecond {
		t.Fatalf("spec %+v", s)
	}
	p := udpmon.PointOf(udpmonfake.Result(s, 1000, 12*time.Microsecond, 0, 0), false)
	// (1472 + 66) × 8 bits every 12 µs.
	want := float64(1538*8) / 12e-6
	if math.Abs(p.SentWireBps/want-1) > 1e-9 || math.Abs(p.RecvWireBps/want-1) > 1e-9 || math.Abs(p.RecvUserBps/(1472*8/12e-6)-1) > 1e-9 {
		t.Errorf("rates: sent %v received %v user %v, want %v", p.SentWireBps, p.RecvWireBps, p.RecvUserBps, want)
	}
	if p.LossAttribution == nil || p.LossAttribution.Lost != 0 {
		t.Errorf("attribution %+v", p.LossAttribution)
	}
	p = udpmon.PointOf(udpmonfake.Result(s, 1000, 12*time.Microsecond, 100, 100), false)
	if a := p.LossAttribution; a == nil || a.Network != 0 || !strings.Contains(a.Verdict, "receiving host's socket buffer") {
		t.Errorf("attribution %+v", a)
	}
	if p := udpmon.PointOf(nil, true); p.SenderRole != result.RoleServer {
		t.Errorf("reverse: %+v", p)
	}
}

// Arrivals timestamped in a burst (read late, in batches) must not make
// the received wire rate exceed the sent one.
func TestReceivedRateNotAboveSent(t *testing.T) {
	cfg := udpmon.Plan{Count: 1000}
	s := cfg.Spec(1472, 0)
	res := udpmonfake.Result(s, 1000, time.Microsecond, 0, 0)
	// Sent 1 µs apart over 999 µs; all read within 400 µs.
	res.Remote.UDPArrivals[0].LastNs = res.Remote.UDPArrivals[0].FirstNs + 400e3
	p := udpmon.PointOf(res, false)
	if p.RecvWireBps > p.SentWireBps*(1+1e-9) || p.RecvWireBps <= 0 {
		t.Errorf("received %.0f Mb/s against %.0f Mb/s sent", p.RecvWireBps/1e6, p.SentWireBps/1e6)
	}
	// With loss the received rate is lower than the sent one, by the loss.
	res = udpmonfake.Result(s, 1000, time.Microsecond, 100, 0)
	res.Remote.UDPArrivals[0].LastNs = res.Remote.UDPArrivals[0].FirstNs + 400e3
	p = udpmon.PointOf(res, false)
	if want := p.SentWireBps * 899 / 999; math.Abs(p.RecvWireBps/want-1) > 1e-9 {
		t.Errorf("received %.0f Mb/s with 10%% loss; want %.0f", p.RecvWireBps/1e6, want/1e6)
	}
}

func TestBar(t *testing.T) {
	if got := udpmon.Bar(3, 12, 90*time.Second, 12); got != "[###.........] 3/12 points  ETA 1m30s" {
		t.Errorf("%q", got)
	}
	if got := udpmon.Bar(5, 5, 0, 4); got != "[####] 5/5 points  done" {
		t.Errorf("%q", got)
	}
}

func TestValidate(t *testing.T) {
	if err := (udpmon.Plan{Sizes: []int{8}, Spacings: []time.Duration{0}}).Validate(); err == nil {
		t.Error("an 8-byte datagram was accepted")
	}
	if err := (udpmon.Plan{Sizes: []int{512}}).Validate(); err == nil {
		t.Error("no spacings accepted")
	}
}

// TestSpinOnlyWhereThereIsAGap: --spin holds gaps; a point of spacing 0
// has none, and its spec must stay valid.
func TestSpinOnlyWhereThereIsAGap(t *testing.T) {
	c := udpmon.Plan{Sizes: []int{512}, Spacings: []time.Duration{0, 5 * time.Microsecond}, Spin: true}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Spec(512, 0).Spin || !c.Spec(512, 5*time.Microsecond).Spin {
		t.Error("spin must be on for paced points only")
	}
}
