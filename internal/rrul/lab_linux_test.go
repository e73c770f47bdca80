//go:build linux

package rrul

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
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

// The lab path of the acceptance: the lab's 19 ms path at 20 Mbit/s each
// way. Under RRUL's load this shared two-core machine's user-space router
// spends about 110 µs of CPU a packet (6.3 s for 57,000 packets in an
// 18.5 s run, load average 18: a third of a core), so at 20 Mbit/s it
// keeps time well enough (docs/rrul.md, "The lab test"); at 40 Mbit/s it
// fell behind in 16 of 18 runs, and at 100 Mbit/s (load average 37) its
// output stood idle 2.5 to 6 s of a 19 s run.
const (
	labRTT  = 19 * time.Millisecond
	labRate = 20e6
	// maxLostShare is how much of the loaded phase the router's output
	// may stand idle while packets were due before the run measured the
	// lab rather than the path: a full queue drains at the rate less that
	// share, so its drain time grows by share/(1-share), 5.3% at 5%, a
	// quarter of the acceptance's 20%. (lab.LostShare, 0.5%, is the bound
	// for goodput, which that idle time costs directly.)
	maxLostShare = 0.05
)

// labRouter is what the lab's router counted over a run's loaded phase:
// its output's idle time while packets were due, its late packets, and
// the queue each way sampled every 20 ms (the rate cap's backlog as a
// delay: the bytes held over the rate, less the path's own delay line).
type labRouter struct {
	loaded       time.Duration
	lostUs       uint64
	late, out    uint64
	maxLateUs    uint64
	queueDelayUs [2][]float64 // a→b (up), b→a (down)
}

// lostShare is the share of the loaded phase the output stood idle
// while packets were due.
func (r labRouter) lostShare() float64 {
	if r.loaded <= 0 {
		return 1
	}
	return float64(r.lostUs) * 1e3 / float64(r.loaded)
}

// queueDelay is the router's queueing delay over the loaded phase, one
// direction's (0 up, 1 down) or both together (-1), at percentile p.
func (r labRouter) queueDelay(dir int, p float64) float64 {
	var v []float64
	if dir >= 0 {
		v = slices.Clone(r.queueDelayUs[dir])
	} else {
		for i := range r.queueDelayUs[0] {
			v = append(v, r.queueDelayUs[0][i]+r.queueDelayUs[1][i])
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[min(len(v)-1, int(p*float64(len(v))))]
}

// labRun is one RRUL run from a to b through a router whose queue, each
// way, holds queue bytes; it returns the run and what the router counted
// while the flows ran.
func labRun(t *testing.T, queue int, load time.Duration) (*result.RRUL, labRouter) {
	t.Helper()
	dir := impair.Config{Delay: labRTT / 2, Rate: labRate, QueueLimit: queue}
	topo := lab.Chain(1500, lab.BigTCPBuffers())
	topo.Router = &lab.RouterSpec{Host: "r", A: "a", B: "b", AtoB: dir, BtoA: dir, RandStart: 7}
	l := lab.New(t, topo)
	a, b := l.Host("a"), l.Host("b")
	// A server with the default limits: a run holds no more tests than
	// it admits from one client.
	port := labtest.StartServer(t, labtest.Host{Name: b.Name, Addr: b.Addr, Command: b.Command})
	router := l.Router()
	// The loaded phase, as the router sees it: from the flows' start
	// (Run starts the three probes, then the flows, each through Go)
	// to their end. The queue is sampled from a second in, once the
	// flows' slow start has filled it.
	var calls atomic.Int32
	var mu sync.Mutex
	var loadStart, loadEnd time.Time
	var first, last lab.RouterStats
	var rs labRouter
	sampled, stopSampling, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	sample := func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		since := time.Now()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			if time.Since(since) < time.Second {
				continue
			}
			st := router.Stats()
			for i, d := range []lab.DirStats{st.AtoB, st.BtoA} {
				held := float64(d.QueuedBytes)*8/labRate*1e6 - float64(dir.Delay.Microseconds())
				rs.queueDelayUs[i] = append(rs.queueDelayUs[i], max(held, 0))
			}
		}
	}
	flowsStarted := func() {
		mu.Lock()
		defer mu.Unlock()
		loadStart, first = time.Now(), router.Stats()
		go sample()
	}
	flowsEnded := func() {
		mu.Lock()
		defer mu.Unlock()
		loadEnd, last = time.Now(), router.Stats()
		close(stopSampling)
		<-sampled
		close(ended)
	}
	cfg := Config{
		Client: control.ClientConfig{Host: b.Addr.String(), Port: port, Logger: labtest.Quiet()},
		Idle:   5 * time.Second, Load: load, After: 2 * time.Second,
		// Loss-based flows, as flent's: see TestLabRRULQueues.
		Flow: cubicFlows(),
		// The sockets must be a's: each probe and flow runs on a thread in a.
		Go: func(f func()) {
			flows := calls.Add(1) == int32(len(ProbeClasses)+1)
			if flows {
				flowsStarted()
			}
			go func() {
				_ = a.Do(func() error { f(); return nil })
				if flows {
					flowsEnded()
				}
			}()
		},
		// The most the path can give: both ways' delay and full queue.
		PathBound: dir.MaxDelay(1500) * 2,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("rrul: %v", err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the flows' test never ended")
	}
	mu.Lock()
	defer mu.Unlock()
	rs.loaded = loadEnd.Sub(loadStart)
	for _, d := range [][2]lab.DirStats{{first.AtoB, last.AtoB}, {first.BtoA, last.BtoA}} {
		rs.lostUs += d[1].OutputLostUs - d[0].OutputLostUs
		rs.late += d[1].ReleasedLate - d[0].ReleasedLate
		rs.out += d[1].Out - d[0].Out
		rs.maxLateUs = max(rs.maxLateUs, d[1].MaxLateUs)
	}
	t.Logf("router over the %.1f s of load: output idle %.1f ms (%.2f%%) while packets were due, %d of %d packets more than 1 ms late (worst %.1f ms); "+
		"its queue as a delay, p10/p50/p90: up %.1f/%.1f/%.1f ms, down %.1f/%.1f/%.1f ms, both %.1f/%.1f/%.1f ms (%d samples)",
		rs.loaded.Seconds(), float64(rs.lostUs)/1e3, 100*rs.lostShare(), rs.late, rs.out, float64(rs.maxLateUs)/1e3,
		rs.queueDelay(0, .1)/1e3, rs.queueDelay(0, .5)/1e3, rs.queueDelay(0, .9)/1e3,
		rs.queueDelay(1, .1)/1e3, rs.queueDelay(1, .5)/1e3, rs.queueDelay(1, .9)/1e3,
		rs.queueDelay(-1, .1)/1e3, rs.queueDelay(-1, .5)/1e3, rs.queueDelay(-1, .9)/1e3, len(rs.queueDelayUs[0]))
	return res, rs
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
// segment lost.
//
// The drain time is one queue's (8·B/R), not both directions' together,
// though each direction has its queue and the load runs both ways: TCP
// loading a drop-tail path both ways does not keep both queues full at
// once (each direction's data delays the other's ACKs: Zhang, Shenker and
// Clark, "Observations on the dynamics of a congestion control algorithm:
// the effects of two-way traffic", SIGCOMM 1991). The router's own
// counters show it: its queue each way, sampled through the load, and the
// two together, which is what a probe crosses. The probes' increase must
// match that sum within 20% of the drain time too: the latency figure is
// checked against the lab's ground truth, not only against the theory.
//
// The deep queue is ten times the path's BDP, so that a queue stands
// nearly full once the flows' windows reach it; the deep case's flows
// must fill 80% of the link's TCP goodput, or the hosts, not the link,
// were the limit. A short queue leaves the link partly idle by design.
//
// A run in which the lab's router fell behind (its output idle while
// packets were due for over maxLostShare of the load) measured the lab,
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
		check    func(res *result.RRUL, rs labRouter, drain float64) string
	}{
		// 250 KB: 100 ms to drain each way at 20 Mbit/s, ten times the
		// path's BDP (47.5 KB).
		{"deep", 250_000, true, 10 * time.Second, func(res *result.RRUL, rs labRouter, drain float64) string {
			in := res.Latency.Increase.P50
			if math.Abs(in-drain) > 0.2*drain {
				return "loaded RTT p50 rose by " + ms(in) + ", want the queue's drain time " + ms(drain) + " ± 20%"
			}
			if q := rs.queueDelay(-1, .5); math.Abs(in-q) > 0.2*drain {
				return "loaded RTT p50 rose by " + ms(in) + ", but the router's queues held " + ms(q) + " (p50, both ways): want them within " + ms(0.2*drain)
			}
			return ""
		}},
		// 3 KB: 1.2 ms each way, two full packets.
		{"short", 3_000, false, 10 * time.Second, func(res *result.RRUL, _ labRouter, _ float64) string {
			l := res.Latency
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
				res, rs := labRun(t, c.queue, c.load)
				logRun(t, res, capacity)
				if share := rs.lostShare(); share > maxLostShare {
					return fmt.Sprintf("the lab's router fell behind: its output stood idle %.0f ms of the %.1f s of load (%.1f%%, over %.0f%%) while packets were due, %d packets late (worst %.1f ms)",
						float64(rs.lostUs)/1e3, rs.loaded.Seconds(), 100*share, 100*maxLostShare, rs.late, float64(rs.maxLateUs)/1e3), false
				}
				valid = true
				for _, f := range res.Flows {
					if f.Congestion != "cubic" {
						return fmt.Sprintf("the %s %s flow ran %q, asked cubic", f.Class, f.Direction, f.Congestion), false
					}
				}
				if lo := min(res.UpBitsPerSecond, res.DownBitsPerSecond); c.saturate && lo < 0.8*capacity {
					return "the flows carried " + mbps(lo) + " one way, under 80% of the link's " + mbps(capacity) + ": the hosts were the limit", false
				}
				m := c.check(res, rs, drain)
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
