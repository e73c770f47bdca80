//go:build linux

package udpmonrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/rr/rrtest"
	"github.com/wireperf/wireperf/internal/runner/udpmonrun"
	"github.com/wireperf/wireperf/internal/testutil/race"
	"github.com/wireperf/wireperf/internal/udpmon"
	"github.com/wireperf/wireperf/internal/units"
)

// pathLab is a ─ r ─ b through the lab's router: rtt and a rate cap of
// rate bit/s each way, its queue 50 ms at the rate, as `wireperf lab up`
// builds it. TCP (the tests' control connections) takes r's own
// forwarding, around the router, so that the router's counts are the
// UDP test's alone.
func pathLab(t *testing.T, rtt time.Duration, rate float64) (*lab.Lab, int) {
	t.Helper()
	atob, btoa := lab.Config{RTT: rtt, Rate: rate}.Directions()
	topo := lab.Chain(1500, nil)
	topo.Router = &lab.RouterSpec{Host: "r", A: "a", B: "b", AtoB: atob, BtoA: btoa, RandStart: 1}
	l := lab.New(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := l.Host("r").Run(ctx, "ip", "-4", "rule", "add", "pref", "100", "ipproto", "tcp", "lookup", "main"); err != nil {
		t.Fatalf("TCP bypass rule: %v: %s", err, out)
	}
	return l, rrtest.StartServer(t, l.Host("b"))
}

// TestLabUDPMonAttributesEachDrop: on the lab's 1 ms, 100 Mbit/s path at
// spacing 0 the sender offers more than the line carries, so the
// router's queue drops, and the receiving host may drop at its socket
// too. Every lost datagram is then counted where it was dropped: the
// router's count in the direction plus the receiving socket's own count
// equal the datagrams lost, exactly, or the remainder is printed as
// unexplained. Without GRO on the receiving socket, Linux counts each
// datagram it drops there; with GRO one per batch, and the verdict says
// the count is of batches.
func TestLabUDPMonAttributesEachDrop(t *testing.T) {
	if testing.Short() {
		t.Skip("two sweeps at line rate; skipped with -short")
	}
	if race.Enabled {
		t.Skip("line-rate test; skipped under the race detector")
	}
	// A 100 Mbit/s bottleneck, so that a sweep at spacing 0 overflows
	// the router's queue however fast this host's sender runs: at 1 Gbit/s
	// a quiet run's sender reached 824 Mbit/s, nothing was dropped, and
	// the check compared nothing.
	l, port := pathLab(t, time.Millisecond, 100e6)
	router := func(time.Time) (udpmon.RouterCounts, error) {
		rs, err := l.RouterStats() // live, exact
		c := lab.CountsOf(rs)
		return udpmon.RouterCounts{InAtoB: c.AtoB.In, LostAtoB: c.AtoB.Lost, InBtoA: c.BtoA.In, LostBtoA: c.BtoA.Lost}, err
	}
	for _, tc := range []struct {
		name  string
		noGSO bool
	}{{"GSO and GRO", false}, {"no GSO, no GRO", true}} {
		t.Run(tc.name, func(t *testing.T) {
			sw := sweep(t, l, port, udpmonrun.Config{Plan: udpmon.Plan{Sizes: []int{1472, 512}, Spacings: []time.Duration{0}, Count: 30000, NoGSO: tc.noGSO}, Router: router})
			var dropped int64
			for _, p := range sw.Points {
				a := p.LossAttribution
				if a == nil || a.Router == nil || a.ReceiverSocket == nil {
					t.Fatalf("size %d: no per-place attribution: %+v", p.Size, a)
				}
				t.Logf("size %d: lost %d (late %d), router %d, socket %d (batches %v), unexplained %d: %s",
					p.Size, a.Lost, p.Late, *a.Router, *a.ReceiverSocket, a.SocketBatches, a.Network, a.Verdict)
				dropped += *a.Router + *a.ReceiverSocket
				switch {
				case a.Network != 0 && !strings.Contains(a.Verdict, units.Thousands(abs(a.Network))):
					t.Errorf("size %d: %d not counted by any place, and the verdict does not say so: %s", p.Size, a.Network, a.Verdict)
				case a.Network != 0 && !a.SocketBatches:
					// Each datagram is its own skb: the counts must add up.
					t.Errorf("size %d: lost %d ≠ router %d + socket %d", p.Size, a.Lost, *a.Router, *a.ReceiverSocket)
				case a.SocketBatches && *a.ReceiverSocket > 0 && !strings.Contains(a.Verdict, "per GRO batch"):
					t.Errorf("size %d: a count of GRO batches given as datagrams: %s", p.Size, a.Verdict)
				}
			}
			if dropped == 0 {
				t.Error("nothing was dropped anywhere: the check compared nothing")
			}
		})
	}
}

func abs(n int64) int64 { return max(n, -n) }
