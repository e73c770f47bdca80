//go:build linux

package lab

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// Acceptance: with 1% loss in the router (data direction, on a 20 ms,
// 1 Gbit/s path) advise names loss/congestion as the limit and reports
// the retransmits; and the RFC 6349 TCP Efficiency it reports is within
// one point of (segments sent − retransmitted) ÷ segments sent from the
// sending host's own kernel counters (Tcp OutSegs and RetransSegs in a's
// /proc/net/snmp, which only advise's connections use). The timelines are
// checked as in TestAcceptAdviseNetwork, which the race detector skips.
// CUBIC, the usual
// default, runs the tests: BBR, this machine's default, barely backs off
// on random loss, which is its point.
func TestAcceptAdviseLoss(t *testing.T) {
	atob := gigabit(20 * time.Millisecond)
	atob.Loss = 0.01
	btoa := gigabit(20 * time.Millisecond)
	l := newRouterLab(t, 1500, RouterSpec{AtoB: atob, BtoA: btoa, RandStart: 41}, BigTCPBuffers())
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)

	out0, ret0 := tcpSegments(t, a)
	rep, text := runAdviseIn(t, a, b, port, 3*time.Second, 1e9, "cubic")
	out1, ret1 := tcpSegments(t, a)

	v := rep.Verdict
	if v.Limit != advise.LimitCongestion {
		t.Errorf("verdict %s, want %s: %s", v.Limit, advise.LimitCongestion, v.Summary)
	}
	tcp := rep.Single.TCP
	if tcp == nil || tcp.Retransmits == 0 || !strings.Contains(text, strconv.FormatInt(tcp.Retransmits, 10)+" retransmits") {
		t.Errorf("the report does not give the retransmits (%+v)", tcp)
	}

	// Efficiency from advise's figures over both tests, and for the
	// single-stream test alone, against the kernel's segment counters
	// over the whole run (the probes and control connections add a few
	// dozen segments).
	var sent, retrans uint64
	for _, res := range rep.Results {
		for _, f := range res.Flows() {
			if f.SenderRole == result.RoleClient && f.Sent != nil && f.Sent.TCPStats != nil {
				sent += f.Sent.TCPStats.BytesSent
				retrans += f.Sent.TCPStats.BytesRetrans
			}
		}
	}
	reported, _ := figures.Efficiency(sent, retrans)
	kernel := 100 * float64((out1-out0)-(ret1-ret0)) / float64(out1-out0)
	t.Logf("TCP Efficiency: advise %.2f%% over both tests (%d bytes sent, %d retransmitted), single stream %.2f%%; "+
		"kernel %.2f%% (OutSegs %d, RetransSegs %d)", reported, sent, retrans, *tcp.EfficiencyPercent, kernel, out1-out0, ret1-ret0)
	if math.Abs(reported-kernel) > 1 {
		t.Errorf("TCP Efficiency %.2f%% is not within 1 point of the kernel's %.2f%%", reported, kernel)
	}
	if tcp.EfficiencyPercent == nil || math.Abs(*tcp.EfficiencyPercent-kernel) > 1 {
		t.Errorf("the single stream's TCP Efficiency %v is not within 1 point of the kernel's %.2f%%", tcp.EfficiencyPercent, kernel)
	}
	if ret1 == ret0 {
		t.Error("the kernel counted no retransmissions: was there loss?")
	}
	for _, res := range rep.Results {
		checkTimelines(t, res, 3*time.Second)
	}
}

// tcpSegments reads the host's Tcp OutSegs and RetransSegs.
func tcpSegments(t *testing.T, h *Host) (out, retrans uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := h.Run(ctx, "cat", "/proc/net/snmp")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Tcp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i := 1; i < len(f) && i < len(names); i++ {
			v, _ := strconv.ParseUint(f[i], 10, 64)
			switch names[i] {
			case "OutSegs":
				out = v
			case "RetransSegs":
				retrans = v
			}
		}
	}
	if names == nil {
		t.Fatalf("no Tcp counters in %s's /proc/net/snmp", h.Name)
	}
	return out, retrans
}
