//go:build linux

package rrul

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/lab/labtest"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/race"
)

func TestMain(m *testing.M) {
	labtest.MaybeServe()
	os.Exit(m.Run())
}

// The lab path of the acceptance: the lab's 19 ms path, at a rate this
// shared two-core machine's user-space router can forward both ways at
// once: at 100 Mbit/s each way, with the load average at 37, its output
// stood idle 2.5 to 6 s of a 19 s run while packets were due, and the
// flows carried 50-73 Mbit/s of 96.5. At 40 Mbit/s the deep case's
// router kept time in two of eighteen runs (load average 5 to 31; behind
// by about 1% even at 5 to 6), the short case's in three of three;
// 20 Mbit/s did no better (behind in three of three at 16 to 19).
const (
	labRTT  = 19 * time.Millisecond
	labRate = 40e6
)

// labRun is one RRUL run from a to b through a router whose queue, each
// way, holds queue bytes; it returns the run and whether the router kept
// up with it.
func labRun(t *testing.T, queue int, load time.Duration) (*result.RRUL, string) {
	t.Helper()
	dir := impair.Config{Delay: labRTT / 2, Rate: labRate, QueueLimit: queue}
	topo := lab.Chain(1500, lab.BigTCPBuffers())
	topo.Router = &lab.RouterSpec{Host: "r", A: "a", B: "b", AtoB: dir, BtoA: dir, RandStart: 7}
	l := lab.New(t, topo)
	a, b := l.Host("a"), l.Host("b")
	port := labtest.StartServerAdmitting(t, labtest.Host{Name: b.Name, Addr: b.Addr, Command: b.Command}, Tests)
	before, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Client: control.ClientConfig{Host: b.Addr.String(), Port: port, Logger: labtest.Quiet()},
		Idle:   5 * time.Second, Load: load, After: 2 * time.Second,
		// Loss-based flows, as flent's: see TestLabRRULQueues.
		Flow: cubicFlows(),
		// The sockets must be a's: each probe and flow runs on a thread in a.
		Go: func(f func()) { go func() { _ = a.Do(func() error { f(); return nil }) }() },
		// The most the path can give: both ways' delay and full queue.
		PathBound: dir.MaxDelay(1500) * 2,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("rrul: %v", err)
	}
	// The router's lateness: an output that stood idle while packets were
	// due for more than lab.LostShare of the run made the lab, not the
	// path, the limit, and the latency is not the queue's.
	after, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	span := time.Since(start)
	var lostUs, late, maxLate uint64
	for _, d := range [][2]lab.DirStats{{before.AtoB, after.AtoB}, {before.BtoA, after.BtoA}} {
		lostUs += d[1].OutputLostUs - d[0].OutputLostUs
		late += d[1].ReleasedLate - d[0].ReleasedLate
		maxLate = max(maxLate, d[1].MaxLateUs)
	}
	t.Logf("router: output idle %.1f ms while packets were due, %d packets late (worst %.1f ms), over %.1f s",
		float64(lostUs)/1e3, late, float64(maxLate)/1e3, span.Seconds())
	var behind string
	if float64(lostUs)*1e3 > lab.LostShare*float64(span) {
		behind = "the lab's router fell behind"
	}
	return res, behind
}

// cubicFlows is the flows' options: the host's defaults with cubic.
func cubicFlows() spec.Spec {
	s := spec.Default()
	s.Congestion = "cubic"
	return s
}

func logRun(t *testing.T, res *result.RRUL, capacity float64) {
	t.Helper()
	l := res.Latency
	t.Logf("goodput up %.1f, down %.1f Mbit/s (capacity %.1f each way); CPU client %.0f%%, server %+v",
		res.UpBitsPerSecond/1e6, res.DownBitsPerSecond/1e6, capacity/1e6, res.CPU.TotalPercent, res.ServerCPU)
	for _, f := range res.Flows {
		limited := "no TCP_INFO"
		if f.RwndLimited != nil {
			limited = fmt.Sprintf("receiver's window %.0f%%, own send buffer %.0f%% of its busy time", 100**f.RwndLimited, 100**f.SndbufLimited)
		}
		t.Logf("  %-3s %-4s %7.2f Mbit/s, %d retransmits; sender RTT %.1f ms, cwnd %d bytes; limited by the %s",
			f.Class, f.Direction, f.BitsPerSecond/1e6, f.Retransmits, f.SenderRTTms, f.SenderCwndBytes, limited)
	}
	t.Logf("RTT ms: idle p50 %.3f p90 %.3f p99 %.3f; loaded p50 %.3f p90 %.3f p99 %.3f; after p50 %.3f; increase p50 %+.3f p99 %+.3f",
		l.Idle.P50/1e3, l.Idle.P90/1e3, l.Idle.P99/1e3, l.Loaded.P50/1e3, l.Loaded.P90/1e3, l.Loaded.P99/1e3, l.After.P50/1e3, l.Increase.P50/1e3, l.Increase.P99/1e3)
	for _, p := range res.Probes {
		for _, ph := range p.Phases {
			owd := "" // the lab's hosts share one clock: the one-way delays say which queue stood
			if ph.ForwardOWD != nil && ph.BackwardOWD != nil {
				owd = fmt.Sprintf("; one-way p50 up %.3f ms, down %.3f ms", ph.ForwardOWD.P50/1e3, ph.BackwardOWD.P50/1e3)
			}
			t.Logf("  UDP %-3s %-6s %5d sent, %4d lost (%.1f%%), RTT p50 %.3f ms%s", p.Class, ph.Label, ph.Sent, ph.Lost, ph.LossPercent(), ph.RTT.P50/1e3, owd)
		}
	}
	for _, h := range res.HostDelays {
		t.Logf("  host delay: %s %s %.3f ms: %s", h.Phase, h.Host, h.AddedUs/1e3, h.Reason)
	}
	t.Logf("load average: %s", loadAverage())
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return string(b[:len(b)-1])
}

// Acceptance (issue 39, item 7): on the 19 ms path with a deep queue the
// probes' loaded RTT exceeds the idle one by the queue's drain time
// within 20%, and with a short queue it stays within 20% of idle.
//
// The flows run cubic, named here, not the host's default: the load must
// be loss-based TCP, which grows its window until the queue overflows, as
// flent's RRUL relies on (CUBIC is Linux's default). This machine's
// default is BBR, which keeps about one BDP in flight and so never fills
// a deep queue: with it the increase stayed at +45 to +61 ms, with no
// segment lost; with cubic it is +89 to +94 ms, with retransmits.
//
// The drain time is one queue's (8·B/R), not both directions' together,
// though each direction has its queue and the load runs both ways: TCP
// loading a drop-tail path both ways does not keep both queues full at
// once (each direction's data delays the other's ACKs: Zhang, Shenker and
// Clark, "Observations on the dynamics of a congestion control algorithm:
// the effects of two-way traffic", SIGCOMM 1991). The probes' one-way
// delays, exact here as the lab's hosts share one clock, show it: in one
// run the up queue stood full (+88 ms one way) and the down one nearly
// empty (+1.7 ms); in another the down one stood (+83 ms, up +29 ms);
// both runs' router fell behind, but the split is the queues' own.
// The increase measured with the router on time: +92.3 and +94.4 ms of
// the 100 ms one queue drains in.
//
// The deep queue is five times the path's BDP, so that a queue stands
// nearly full once the flows' windows reach it; the deep case's flows
// must fill 80% of the link's TCP goodput, or the hosts, not the link,
// were the limit. A short queue leaves the link partly idle by design.
//
// A run in which the lab's router fell behind (its output idle while
// packets were due for over lab.LostShare of the run) measured the lab,
// not the path: it does not count, and a case in which every attempt did
// is skipped with the router's figures.
func TestLabRRULQueues(t *testing.T) {
	if testing.Short() {
		t.Skip("runs of 17 s each through the lab; skipped with -short")
	}
	if race.Enabled {
		t.Skip("eight TCP flows through the lab; skipped under the race detector")
	}
	capacity := lab.TCPGoodput(labRate, 1500, lab.Framing{})
	cases := []struct {
		name     string
		queue    int
		saturate bool
		load     time.Duration
		check    func(l result.RRULLatency, drain float64) string
	}{
		// 500 KB: 100 ms to drain each way, five times the path's BDP.
		{"deep", 500_000, true, 10 * time.Second, func(l result.RRULLatency, drain float64) string {
			if in := l.Increase.P50; math.Abs(in-drain) > 0.2*drain {
				return "loaded RTT p50 rose by " + ms(in) + ", want the queue's drain time " + ms(drain) + " ± 20%"
			}
			return ""
		}},
		// 6 KB: 1.2 ms each way, four full packets.
		{"short", 6_000, false, 10 * time.Second, func(l result.RRULLatency, drain float64) string {
			if d := l.Loaded.P50 - l.Idle.P50; math.Abs(d) > 0.2*l.Idle.P50 {
				return "loaded RTT p50 " + ms(l.Loaded.P50) + " against idle " + ms(l.Idle.P50) + ", want within 20%"
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			drain := float64(c.queue) * 8 / labRate * 1e6 // µs, one queue (see above)
			t.Logf("queue %d bytes each way at %.0f Mbit/s: %.3f ms to drain one", c.queue, labRate/1e6, drain/1e3)
			valid := false
			msg, ok := labtest.BestOf(t, 3, func(attempt int) (string, bool) {
				res, behind := labRun(t, c.queue, c.load)
				logRun(t, res, capacity)
				if behind != "" {
					return behind, false
				}
				valid = true
				if lo := min(res.UpBitsPerSecond, res.DownBitsPerSecond); c.saturate && lo < 0.8*capacity {
					return "the flows carried " + mbps(lo) + " one way, under 80% of the link's " + mbps(capacity) + ": the hosts were the limit", false
				}
				m := c.check(res.Latency, drain)
				return m, m == ""
			})
			switch {
			case ok:
			case !valid:
				t.Skipf("%s in every attempt (load average %s): the lab, not the path, set the latency", msg, loadAverage())
			default:
				t.Error(msg)
			}
		})
	}
}

func ms(us float64) string    { return fmt.Sprintf("%.3f ms", us/1e3) }
func mbps(bps float64) string { return fmt.Sprintf("%.1f Mbit/s", bps/1e6) }
