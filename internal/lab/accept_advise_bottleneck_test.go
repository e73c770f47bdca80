//go:build linux

package lab

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/figures"
)

// Acceptance: advise finds the bottleneck by itself. On the 215 ms,
// 1 Gbit/s path with tcp_rmem capped at 1 MiB, four streams are
// window-limited too (about 80 Mbit/s together); without --bottleneck,
// advise sends packet trains and adds streams while they are
// window-limited, and the BDP it prints is within ±15% of
// 1 Gbit/s × 215 ms = 26.9 MB. With the buffers raised as it says, the
// verdict is not window-limited, and slow start ends inside advise's
// chosen test (CUBIC's climb back after its overshoot may not, which
// advise reports as a steady state not reached). Each test is at most
// advise.MaxTestLength (13 s at this RTT); the two runs took 56 s and
// 40 s on the development VM.
func TestAcceptAdviseFindsBottleneck(t *testing.T) {
	const rtt = 215 * time.Millisecond
	l := adviseLab(t, gigabit(rtt), 23, map[string]string{"net.ipv4.tcp_rmem": "4096 131072 1048576"})
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)

	before, _ := runAdviseIn(t, a, b, port, 0, 0, "cubic")
	bdp := figures.BDP(1e9, rtt)
	t.Logf("streams tried %+v; bottleneck %s (%s); BDP %.1f MB; router %+v", before.StreamSteps,
		mbit(before.BottleneckBps), before.BottleneckSource, before.BDPBytes/1e6, l.Router().Stats())
	if before.BottleneckSource == "given" {
		t.Errorf("bottleneck %s, want measured by the tests or the packet train", before.BottleneckSource)
	}
	if before.Train == nil {
		t.Errorf("no packet train though the streams were window-limited")
	}
	if math.Abs(before.BDPBytes-bdp) > 0.15*bdp {
		t.Errorf("BDP %.1f MB, want %.1f MB ± 15%%", before.BDPBytes/1e6, bdp/1e6)
	}
	if len(before.StreamSteps) < 2 || !before.StreamSteps[0].WindowLimited {
		t.Errorf("advise did not add streams to window-limited ones: %+v", before.StreamSteps)
	}
	if before.TestSeconds > advise.MaxTestLength.Seconds() || before.LengthGiven {
		t.Errorf("test length %.0f s (given %v), want chosen and at most %v", before.TestSeconds, before.LengthGiven, advise.MaxTestLength)
	}
	if v := before.Verdict.Limit; v != advise.LimitReceiverWindow {
		t.Fatalf("verdict %s, want %s: %s", v, advise.LimitReceiverWindow, before.Verdict.Summary)
	}
	hosts := map[string]*Host{"client": a, "server": b}
	for _, s := range before.Advice.Sysctls {
		t.Logf("applying on the %s: %s", s.Host, s.Command())
		if err := hosts[s.Host].Sysctl(s.Key, s.Value); err != nil {
			t.Fatal(err)
		}
	}

	after, _ := runAdviseIn(t, a, b, port, 0, 0, "cubic")
	t.Logf("after: verdict %s; one stream %s; streams tried %+v; test %.0f s; router %+v", after.Verdict.Limit,
		mbit(after.Single.GoodputBps), after.StreamSteps, after.TestSeconds, l.Router().Stats())
	// The router's memory limit is sized for the configured path: it
	// drops nothing of its own, whatever the number of streams.
	for _, d := range []DirStats{l.Router().Stats().AtoB, l.Router().Stats().BtoA} {
		if d.DroppedLimit != 0 {
			t.Errorf("the router dropped %d packets at its memory limit", d.DroppedLimit)
		}
	}
	// Slow start itself must end well inside advise's chosen test; what
	// may remain is CUBIC's climb back after slow start's overshoot,
	// tens of seconds at this RTT, which advise reports as a steady state
	// not reached (retransmits confined to the start, the rate still
	// rising) with a longer test as its advice, rather than as a lossy
	// path.
	switch v := after.Verdict; v.Limit {
	case advise.LimitReceiverWindow, advise.LimitSenderBuffer:
		t.Errorf("after raising the buffers the verdict is %s: %s", v.Limit, v.Summary)
	case advise.LimitSlowStart:
		if !strings.HasPrefix(v.Summary, "test too short: steady state not reached") {
			t.Errorf("after raising the buffers the verdict is %s: %s", v.Limit, v.Summary)
		}
	}
}
