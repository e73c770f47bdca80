//go:build linux

package lab

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// Acceptance: the submarine cable. On a 215 ms, 1 Gbit/s path whose hosts
// cap TCP's receive buffer at 1 MiB (tcp_rmem max), advise says the
// stream is receiver-window-limited, names the receiving host (the
// server) and recommends a buffer of at least the BDP (26.9 MB). Raising
// tcp_rmem and tcp_wmem inside the namespaces as it says changes the
// verdict, and the single stream's goodput rises at least 5× (measured
// over 6 s rather than 4 once the window no longer limits it). The tests
// run CUBIC, the usual Linux default (this machine's is BBR, whose
// window-bound case the verdict's unit tests cover).
func TestAcceptAdviseWindow(t *testing.T) {
	const rtt = 215 * time.Millisecond
	l := adviseLab(t, gigabit(rtt), 21, map[string]string{"net.ipv4.tcp_rmem": "4096 131072 1048576"})
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)
	// The emulated path is the router's, which shares the machine with
	// the test: on a busy machine its delay jitters by more than HyStart's
	// 16 ms, which ends CUBIC's slow start early at a small window, and
	// at 215 ms CUBIC then needs far longer than the test to recover.
	// advise says so (slow-start-limited, ended early), but it is not the
	// case under test: each phase gets a second attempt (see bestOf).
	var before *advise.Report
	var text string
	bestOf(t, 2, func(int) (struct{}, bool) {
		before, text = runAdviseIn(t, a, b, port, 4*time.Second, 1e9, "cubic")
		return struct{}{}, before.Verdict.Limit == advise.LimitReceiverWindow
	})

	v := before.Verdict
	if v.Limit != advise.LimitReceiverWindow || v.Host != result.RoleServer {
		t.Fatalf("verdict %s on %q, want %s on the server: %s", v.Limit, v.Host, advise.LimitReceiverWindow, v.Summary)
	}
	if !strings.Contains(text, "the server ("+b.Addr.String()+")") {
		t.Errorf("the report does not name the receiving host %s", b.Addr)
	}
	bdp := figures.BDP(1e9, rtt)
	if math.Abs(before.BDPBytes-bdp) > 0.1*bdp {
		t.Errorf("BDP %.0f bytes, want %.0f ± 10%%", before.BDPBytes, bdp)
	}
	if float64(before.Advice.Buffer) < before.BDPBytes {
		t.Errorf("recommended buffer %d is below the BDP %.0f", before.Advice.Buffer, before.BDPBytes)
	}
	// The advice as a user would follow it: each sysctl on the host it
	// names. The receiver's tcp_rmem must be among them.
	hosts := map[string]*Host{result.RoleClient: a, result.RoleServer: b}
	raisedRmem := false
	for _, s := range before.Advice.Sysctls {
		t.Logf("applying on the %s: %s", s.Host, s.Command())
		if err := hosts[s.Host].Sysctl(s.Key, s.Value); err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(s.Value); s.Host == result.RoleServer && s.Key == "net.ipv4.tcp_rmem" && len(f) == 3 {
			n, _ := strconv.ParseFloat(f[2], 64)
			raisedRmem = n >= bdp
		}
	}
	if !raisedRmem {
		t.Fatalf("the advice does not raise the receiver's tcp_rmem to a buffer ≥ BDP: %+v", before.Advice.Sysctls)
	}

	// With the window lifted, the same early end of slow start leaves
	// the stream growing by CUBIC's curve, and 4 s shows little of that
	// growth (87.9 Mbit/s, 4.5×, was seen with slow start ended at 2.9 s).
	// advise's own advice for that verdict is to measure for longer: the
	// second phase runs 6 s tests, with up to three attempts.
	var after *advise.Report
	bestOf(t, 3, func(int) (struct{}, bool) {
		after, _ = runAdviseIn(t, a, b, port, 6*time.Second, 1e9, "cubic")
		return struct{}{}, after.Verdict.Limit != advise.LimitReceiverWindow && after.Single.GoodputBps >= 5*before.Single.GoodputBps
	})
	ratio := after.Single.GoodputBps / before.Single.GoodputBps
	t.Logf("verdict %s → %s; one stream %s → %s (%.1f×)", v.Limit, after.Verdict.Limit,
		mbit(before.Single.GoodputBps), mbit(after.Single.GoodputBps), ratio)
	if after.Verdict.Limit == advise.LimitReceiverWindow {
		t.Errorf("the verdict did not change: %s", after.Verdict.Summary)
	}
	if ratio < 5 {
		t.Errorf("goodput rose %.1f×, want at least 5×", ratio)
	}
}
