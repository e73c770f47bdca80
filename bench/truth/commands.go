package main

// The other commands' cells: rr idle and under load, udpmon, advise,
// sweep and group, each held to the lab's counters and to its path's
// arithmetic (docs/truth.md, "Every command").

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/result"
)

// commandPaths are the paths of the other commands' cells: a short
// path, a research link and a 215 ms submarine path.
var commandPaths = []path{{"1ms", 1e9, "1g"}, {"19ms", 622e6, "622m"}, {"215ms", 1e9, "1g"}}

// pathLimits are what a lab's path allows a packet: the least RTT (the
// delay both ways) and the most (each direction's impair MaxDelay: the
// delay, a full queue and the packet's own serialisation), before the
// router's lateness.
type pathLimits struct {
	floor, bound time.Duration
}

func limitsOf(st *lab.State) (pathLimits, error) {
	atob, err := impair.ParseConfig(st.AtoB)
	if err != nil {
		return pathLimits{}, err
	}
	btoa, err := impair.ParseConfig(st.BtoA)
	if err != nil {
		return pathLimits{}, err
	}
	return pathLimits{floor: atob.Delay + btoa.Delay, bound: atob.MaxDelay(st.MTU) + btoa.MaxDelay(st.MTU)}, nil
}

// routerLate is the worst lateness the router has counted since it
// started, in either direction: at least the cell's own, and the same
// allowance as the product's own bound (lab.RouterWatch.RTTBound).
func routerLate(st *lab.State) time.Duration {
	return time.Duration(max(st.Router.AtoB.MaxLateUs, st.Router.BtoA.MaxLateUs)) * time.Microsecond
}

// cellRun is one command run through the lab, with the router's state
// around it.
type cellRun struct {
	out, errb     bytes.Buffer
	err           error
	before, after *lab.State
	secs          float64 // the command's wall time
}

func runInLab(ctx context.Context, wp, name string, timeout time.Duration, args ...string) *cellRun {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := &cellRun{}
	r.before, _ = lab.Status(name)
	cmd := exec.CommandContext(ctx, wp, append([]string{"lab", "exec", name, "a", "--", wp}, args...)...)
	cmd.Stdout, cmd.Stderr = &r.out, &r.errb
	start := time.Now()
	r.err = cmd.Run()
	r.secs = time.Since(start).Seconds()
	time.Sleep(1200 * time.Millisecond) // the router writes its counters every second
	r.after, _ = lab.Status(name)
	return r
}

// idle is the router's lost output time over the run.
func (r *cellRun) idle() time.Duration {
	if r.before == nil || r.after == nil {
		return 0
	}
	return lab.RouterIdle(r.before.Router, r.after.Router)
}

// watched checks that a command which the router held back by more than
// the threshold says so: its warnings name the lab's router. The run's
// wall time is longer than the command's test, so this asks less than
// the command does.
func (r *cellRun) watched(warnings []string) []string {
	idle := r.idle()
	if r.secs <= 0 || idle.Seconds() < lab.LostShare*r.secs {
		return nil
	}
	for _, w := range warnings {
		if strings.Contains(w, "fell behind") {
			return nil
		}
	}
	return []string{fmt.Sprintf("the router's output stood idle %.1f ms of the run's %.1f s (above %.1f%%), and no warning says so",
		float64(idle)/1e6, r.secs, 100*lab.LostShare)}
}

func (r *cellRun) lateText() string {
	return fmt.Sprintf("%.1f ms", float64(r.idle())/1e6)
}

// commandCell is one of the other commands' cells: its name and how to
// run and check it. It returns the table's figures and what they were
// held to, and the failed checks.
type commandCell struct {
	name string
	run  func(ctx context.Context, wp, name string, p path) (figures, against string, fails []string, r *cellRun)
}

func commandCells() []commandCell {
	return []commandCell{
		{"rr", runRR(nil)},
		{"rr --load tcp,2", runRR([]string{"--load", "tcp,2", "--load-idle", "3s", "--load-time", "10s", "--load-after", "3s"})},
		{"udpmon 1472,512 spacing 0", runUDPMon},
		{"advise -C cubic", runAdvise},
		{"sweep -P 1,2", runSweep},
		{"daemon task client -C cubic", runDaemon},
		{"ping --raw", runProbe("ping")},
		{"tcp-connect", runProbe("tcp-connect")},
	}
}

// runRR runs rr, idle (load nil) or under load, and holds every phase's
// latencies to the path: none below its floor (the delay both ways, less
// 1% for the clocks' reading), none above its bound plus the router's
// lateness unless the phase is flagged as a host's delay.
func runRR(load []string) func(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
	return func(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
		args := append([]string{"rr", "10.77.2.2", "-t", "5", "-J"}, load...)
		r := runInLab(ctx, wp, name, 120*time.Second, args...)
		res, err := resultOf(r.out.Bytes())
		if err != nil || r.before == nil || r.after == nil {
			return "no result", "-", []string{fmt.Sprintf("%v %s", err, firstLine(r.errb.String()))}, r
		}
		var fails []string
		if r.err != nil {
			fails = append(fails, "exit: "+firstLine(res.Error+" "+r.errb.String()))
		}
		lim, err := limitsOf(r.after)
		if err != nil {
			return "-", "-", []string{err.Error()}, r
		}
		bound := lim.bound + routerLate(r.after)
		figs, flagged, more := checkRR(res, lim.floor, bound)
		fails = append(fails, more...)
		fails = append(fails, r.watched(res.Warnings)...)
		against := fmt.Sprintf("floor %.2f, bound %.2f ms", lim.floor.Seconds()*1e3, bound.Seconds()*1e3)
		if len(flagged) > 0 {
			var ph []string
			for k := range flagged {
				ph = append(ph, k)
			}
			sort.Strings(ph)
			against += "; host delay flagged: " + strings.Join(ph, ", ")
		}
		return strings.Join(figs, "; "), against, fails, r
	}
}

// checkRR holds an rr result's latencies to the path (see runRR): floor
// the delay both ways, bound the most RTT the path and the router's
// lateness allow. It returns each point's figures, the phases flagged as
// a host's delay, and the failed checks.
func checkRR(res *result.Result, floor, bound time.Duration) (figs []string, flagged map[string]bool, fails []string) {
	rr := res.Local.RR
	if rr == nil || len(rr.Points) == 0 {
		return nil, nil, []string{"no rr points"}
	}
	flagged = map[string]bool{}
	for _, w := range res.Warnings {
		// A warning that names a host's delay flags every phase.
		if strings.Contains(w, "host") && !strings.Contains(w, "fell behind") {
			for _, pt := range rr.Points {
				flagged[pt.Label] = true
			}
		}
	}
	if rr.Load != nil {
		for _, h := range rr.Load.HostDelays {
			flagged[h.Phase] = true
		}
		for _, ph := range rr.Load.Phases {
			if ph.Incomplete {
				fails = append(fails, fmt.Sprintf("%s phase ran %.2f of %.2f s", ph.Label, ph.Seconds, ph.PlannedSeconds))
			}
		}
		if rr.Load.LoadError != "" {
			fails = append(fails, "load: "+rr.Load.LoadError)
		}
	}
	floorUs := 0.99 * float64(floor.Microseconds())
	boundUs := float64(bound.Microseconds())
	for _, pt := range rr.Points {
		label := pt.Label
		if label == "" {
			label = fmt.Sprintf("%d B", pt.RequestSize)
		}
		figs = append(figs, fmt.Sprintf("%s: net RTT min %.2f p99 %.2f max %.2f ms", label, pt.NetworkRTT.Min/1e3, pt.NetworkRTT.P99/1e3, pt.NetworkRTT.Max/1e3))
		if pt.Completed == 0 {
			fails = append(fails, label+": no transaction completed")
			continue
		}
		for _, q := range []struct {
			what string
			v    float64
		}{{"RTT min", pt.RTT.Min}, {"network RTT min", pt.NetworkRTT.Min}} {
			if q.v < floorUs {
				fails = append(fails, fmt.Sprintf("%s: %s %.3f ms, below the path's floor %.3f ms", label, q.what, q.v/1e3, floor.Seconds()*1e3))
			}
		}
		if flagged[pt.Label] {
			continue
		}
		// p99 is what HostDelays judges; the maximum is one probe,
		// held to the bound as well, unless the point's own host flags
		// name a host in that figure.
		named := map[string]bool{}
		for _, f := range pt.HostFlags {
			named[f.Figure] = true
		}
		for _, q := range []struct {
			what, figure string
			v            float64
		}{{"network RTT p99", "p99", pt.NetworkRTT.P99}, {"network RTT max", "max", pt.NetworkRTT.Max}} {
			if q.v > boundUs && !named[q.figure] {
				fails = append(fails, fmt.Sprintf("%s: %s %.3f ms, above the path's bound %.3f ms (queue and router lateness included), not flagged as a host's delay",
					label, q.what, q.v/1e3, boundUs/1e3))
			}
		}
	}
	return figs, flagged, fails
}

// udpmonDoc is the part of udpmon's -J document the cell reads.
type udpmonDoc struct {
	Points   []udpmonPoint `json:"points"`
	Warnings []string      `json:"warnings"`
}

type udpmonPoint struct {
	Size            int         `json:"size"`
	Error           string      `json:"error"`
	Lost            int64       `json:"lost"`
	LossAttribution *udpmonLoss `json:"loss_attribution"`
}

// udpmonLoss is figures.UDPLoss as the JSON has it.
type udpmonLoss struct {
	Network        int64
	ReceiverSocket *int64
	SocketBatches  bool
	Router         *int64
}

// runUDPMon runs udpmon at spacing 0 (the router's queue drops) and holds
// its attribution to the counters: per point, the router's and the
// socket's counts and the unexplained rest add up to the loss; over the
// sweep, the router's counts add up to what the router dropped a→b.
func runUDPMon(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
	r := runInLab(ctx, wp, name, 180*time.Second, "udpmon", "10.77.2.2", "--sizes", "1472,512", "--spacing", "0", "--count", "20000", "--no-progress", "-J")
	var wrapper struct {
		Sweep *udpmonDoc `json:"sweep"`
	}
	err := json.Unmarshal(r.out.Bytes(), &wrapper)
	if err == nil && wrapper.Sweep == nil {
		err = fmt.Errorf("no sweep in the document")
	}
	if err != nil || r.before == nil || r.after == nil {
		return "no result", "-", []string{fmt.Sprintf("%v %s", err, firstLine(r.errb.String()))}, r
	}
	doc := wrapper.Sweep
	var fails []string
	if r.err != nil {
		fails = append(fails, "exit: "+firstLine(r.errb.String()))
	}
	drops := int64(r.after.Router.AtoB.Lost() - r.before.Router.AtoB.Lost())
	figs, more := checkUDPMon(doc, drops)
	fails = append(fails, more...)
	fails = append(fails, r.watched(doc.Warnings)...)
	return strings.Join(figs, "; "), fmt.Sprintf("lab: %d dropped a→b", drops), fails, r
}

// checkUDPMon holds a udpmon sweep's loss attribution to the counters
// (see runUDPMon): drops is what the router dropped a→b over the sweep.
// It returns each point's figures and the failed checks.
func checkUDPMon(doc *udpmonDoc, drops int64) (figs, fails []string) {
	var routerSum int64
	for _, pt := range doc.Points {
		if pt.Error != "" {
			fails = append(fails, fmt.Sprintf("%d B: %s", pt.Size, pt.Error))
			continue
		}
		a := pt.LossAttribution
		if a == nil {
			if pt.Lost > 0 {
				fails = append(fails, fmt.Sprintf("%d B: %d lost, no attribution", pt.Size, pt.Lost))
			}
			figs = append(figs, fmt.Sprintf("%d B: lost %d", pt.Size, pt.Lost))
			continue
		}
		if a.Router == nil {
			fails = append(fails, fmt.Sprintf("%d B: run through a lab, but the router's drops are not counted", pt.Size))
			continue
		}
		routerSum += *a.Router
		// A socket that took GRO batches counts a dropped batch once: its
		// count is printed as batches, and the datagrams beyond one a
		// batch are in the unexplained rest, so the sum holds either way.
		sock, sockText := int64(0), "-"
		if a.ReceiverSocket != nil {
			sock, sockText = *a.ReceiverSocket, fmt.Sprint(*a.ReceiverSocket)
			if a.SocketBatches {
				sockText += " batches"
			}
		}
		figs = append(figs, fmt.Sprintf("%d B: lost %d = router %d + socket %s + unexplained %d", pt.Size, pt.Lost, *a.Router, sockText, a.Network))
		if a.Network < 0 {
			fails = append(fails, fmt.Sprintf("%d B: unexplained %d, below zero", pt.Size, a.Network))
		}
		// The router also drops the test's control packets, so its
		// count may exceed the data's loss only by those.
		if *a.Router+sock+a.Network != pt.Lost && *a.Router+sock <= pt.Lost {
			fails = append(fails, fmt.Sprintf("%d B: router %d + socket %d + unexplained %d ≠ lost %d", pt.Size, *a.Router, sock, a.Network, pt.Lost))
		}
	}
	if routerSum != drops {
		fails = append(fails, fmt.Sprintf("the points' router counts add up to %d, the router dropped %d a→b over the run", routerSum, drops))
	}
	return figs, fails
}

// adviseDoc is the part of advise's -J document the cell reads.
type adviseDoc struct {
	Sender struct {
		Socket struct {
			Congestion string `json:"congestion"`
		} `json:"socket"`
	} `json:"sender"`
	BottleneckBps float64 `json:"bottleneck_bps"`
	// BottleneckSource is "packet train" or "given" for a line rate
	// (the ideal is its TCP goodput), "measured" for the best
	// multi-stream goodput (the ideal is that goodput).
	BottleneckSource string `json:"bottleneck_source"`
	// BottleneckLowerBound says why a measured bottleneck is only a lower
	// bound the host limited ("" when it is not).
	BottleneckLowerBound string  `json:"bottleneck_lower_bound"`
	IdealBps             float64 `json:"ideal_bps"`
	MSS                  int     `json:"mss"`
	PathMTU              int     `json:"path_mtu"`
	Single               struct {
		GoodputBps float64 `json:"goodput_bps"`
		Steady     *struct {
			RateBps float64 `json:"rate_bps"`
			Retrans int64   `json:"retrans_segments"`
		} `json:"steady"`
	} `json:"single"`
	Verdict struct {
		Limit   string `json:"limit"`
		Summary string `json:"summary"`
	} `json:"verdict"`
	Advice struct {
		Steps []string `json:"steps"`
	} `json:"advice"`
	Warnings []string `json:"warnings"`
}

// runAdvise runs advise with CUBIC and holds its report to the path: the
// tested algorithm on its lines, the line-rate arithmetic exact, no
// stream above the path, and a verdict the figures support: no loss
// verdict, nor advice to hunt drops, where the path has no loss but its
// queue and the steady state filled it.
func runAdvise(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
	r := runInLab(ctx, wp, name, 300*time.Second, "advise", "10.77.2.2", "-C", "cubic", "-J")
	var doc adviseDoc
	if err := json.Unmarshal(r.out.Bytes(), &doc); err != nil || r.before == nil || r.after == nil {
		return "no result", "-", []string{fmt.Sprintf("%v %s", err, firstLine(r.errb.String()))}, r
	}
	var fails []string
	if r.err != nil {
		fails = append(fails, "exit: "+firstLine(r.errb.String()))
	}
	atob, _ := impair.ParseConfig(r.after.AtoB)
	capacity := lab.TCPGoodput(p.rate, 1500, lab.FramingEthernet)
	fails = append(fails, checkAdvise(&doc, "cubic", capacity, atob.Loss > 0 || atob.GE != nil)...)
	fails = append(fails, r.watched(doc.Warnings)...)
	steady := "-"
	if doc.Single.Steady != nil {
		steady = fmt.Sprintf("%.1f (%d segments retransmitted)", doc.Single.Steady.RateBps/1e6, doc.Single.Steady.Retrans)
	}
	bound := ""
	if doc.BottleneckLowerBound != "" {
		bound = " (a lower bound: the host paced the packet trains)"
	}
	return fmt.Sprintf("%s; one stream %.1f, steady %s Mbit/s", doc.Verdict.Limit, doc.Single.GoodputBps/1e6, steady),
		fmt.Sprintf("capacity %.1f; ideal %.1f of bottleneck %.1f%s", capacity/1e6, doc.IdealBps/1e6, doc.BottleneckBps/1e6, bound), fails, r
}

// checkAdvise holds an advise report to its path (see runAdvise): cc
// the algorithm asked for, capacity the path's TCP goodput, randomLoss
// whether the path loses packets other than at its queue.
func checkAdvise(doc *adviseDoc, cc string, capacity float64, randomLoss bool) (fails []string) {
	if doc.Sender.Socket.Congestion != cc {
		fails = append(fails, fmt.Sprintf("the sender's line names %q, the test asked for %s", doc.Sender.Socket.Congestion, cc))
	}
	mtu := doc.PathMTU
	if mtu == 0 {
		mtu = 1500
	}
	if doc.BottleneckSource == "measured" {
		if math.Abs(doc.IdealBps-doc.BottleneckBps) > 1e-3*doc.BottleneckBps {
			fails = append(fails, fmt.Sprintf("ideal %.1f Mbit/s, the measured bottleneck's goodput %.1f", doc.IdealBps/1e6, doc.BottleneckBps/1e6))
		}
	} else if want := lab.TCPGoodput(doc.BottleneckBps, mtu, lab.FramingEthernet); math.Abs(doc.IdealBps-want) > 1e-3*want {
		fails = append(fails, fmt.Sprintf("ideal %.1f Mbit/s, the arithmetic (%d/%d × %.1f) gives %.1f", doc.IdealBps/1e6, mtu-52, mtu+38, doc.BottleneckBps/1e6, want/1e6))
	}
	if doc.Single.GoodputBps > (1+lab.RowTolerance)*capacity {
		fails = append(fails, fmt.Sprintf("one stream %.1f Mbit/s, above the path's %.1f", doc.Single.GoodputBps/1e6, capacity/1e6))
	}
	full := doc.Single.Steady != nil && doc.Single.Steady.RateBps >= 0.95*capacity
	hunts := false
	for _, s := range doc.Advice.Steps {
		if strings.Contains(s, "drop counters") || strings.Contains(s, "where the packets are lost") {
			hunts = true
		}
	}
	if !randomLoss && full && (doc.Verdict.Limit == "congestion" || hunts) {
		fails = append(fails, fmt.Sprintf("verdict %q (advice to hunt drops: %v) on a path without loss whose steady state held %.1f of %.1f Mbit/s",
			doc.Verdict.Limit, hunts, doc.Single.Steady.RateBps/1e6, capacity/1e6))
	}
	if (doc.Verdict.Limit == "receiver-window" || doc.Verdict.Limit == "sender-buffer") && doc.Single.GoodputBps >= 0.95*capacity {
		fails = append(fails, fmt.Sprintf("verdict %q, yet one stream reached %.1f of %.1f Mbit/s", doc.Verdict.Limit, doc.Single.GoodputBps/1e6, capacity/1e6))
	}
	if doc.Verdict.Limit == "network" && doc.BottleneckLowerBound != "" {
		fails = append(fails, fmt.Sprintf("verdict network on a bottleneck that is a lower bound (%s): %q", doc.BottleneckLowerBound, doc.Verdict.Summary))
	}
	if doc.Verdict.Limit == "network" && doc.Single.GoodputBps < 0.8*capacity && !full {
		fails = append(fails, fmt.Sprintf("verdict network (path full), yet one stream reached %.1f of %.1f Mbit/s and no steady state filled it: %q",
			doc.Single.GoodputBps/1e6, capacity/1e6, doc.Verdict.Summary))
	}
	return fails
}

// runSweep runs a two-point sweep into a throw-away archive, then holds
// each stored run's result to the same checks as a client cell's.
func runSweep(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
	dir, err := os.MkdirTemp("", "truth-sweep-")
	if err != nil {
		return "-", "-", []string{err.Error()}, &cellRun{}
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "a.db")
	t, _ := seconds(p)
	r := runInLab(ctx, wp, name, 300*time.Second, "sweep", "10.77.2.2", "-P", "1,2", "-t", fmt.Sprintf("%ds", t/2), "--name", "truth", "--db", db, "--", "-C", "cubic")
	var fails []string
	if r.err != nil {
		fails = append(fails, "exit: "+firstLine(r.errb.String()))
	}
	out, err := exec.CommandContext(ctx, wp, "runs", "--db", db, "--campaign", "truth", "-J").Output()
	if err != nil {
		return "-", "-", append(fails, "runs: "+err.Error()), r
	}
	var runs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) != 2 {
		return "-", "-", append(fails, fmt.Sprintf("runs: %d stored (want 2) %v", len(runs), err)), r
	}
	capacity := lab.TCPGoodput(p.rate, 1500, lab.FramingEthernet)
	caps := map[string]float64{result.RoleClient: capacity, result.RoleServer: capacity}
	var figs, warnings []string
	for _, run := range runs {
		doc, err := exec.CommandContext(ctx, wp, "show", run.ID, "--db", db, "-J").Output()
		if err != nil {
			fails = append(fails, fmt.Sprintf("show %s: %v", run.ID, err))
			continue
		}
		res, err := resultOf(doc)
		if err != nil {
			fails = append(fails, fmt.Sprintf("show %s: %v", run.ID, err))
			continue
		}
		warnings = append(warnings, res.Warnings...)
		for _, f := range append(append(lab.CheckRows(res, caps), lab.CheckAddsUp(res)...), lab.CheckTotal(res, nil)...) {
			fails = append(fails, run.ID+": "+f)
		}
		for _, d := range res.Directions() {
			figs = append(figs, fmt.Sprintf("-P %d: %.1f", res.Spec.Streams, d.Received.BitsPerSecond()/1e6))
		}
	}
	fails = append(fails, r.watched(warnings)...)
	return strings.Join(figs, ", ") + " Mbit/s", fmt.Sprintf("capacity %.1f", capacity/1e6), fails, r
}

// groupSenders and groupAccess are the group cell's lab: three senders,
// each on a 300 Mbit/s access link, sharing the path to b.
const (
	groupSenders = 3
	groupAccess  = "300m"
)

// groupDoc is the part of group's -J document the cell reads.
type groupDoc struct {
	Pairs []struct {
		Sender   string          `json:"sender"`
		Receiver string          `json:"receiver"`
		Result   json.RawMessage `json:"result"`
		Error    string          `json:"error"`
	} `json:"pairs"`
	Sum struct {
		ReceivedBps float64 `json:"received_bits_per_second"`
		Intervals   []struct {
			Start, End float64
			Bps        float64 `json:"received_bits_per_second"`
			Omitted    bool    `json:"omitted"`
		} `json:"intervals"`
	} `json:"sum"`
	Error    string   `json:"error"`
	Warnings []string `json:"warnings"`
}

// runGroupPath runs the group cell on a many-senders lab of its own:
// every pair's rows held to its access link, the rows to the totals, and
// the sum, per interval and in all, to what the shared path and the
// access links can carry together.
func runGroupPath(ctx context.Context, wp, name string, p path, host string) (failed int, err error) {
	if out, err := exec.Command(wp, "lab", "up", name, "--rtt", p.rtt, "--rate", p.name, "--senders", fmt.Sprint(groupSenders),
		"--access-rate", groupAccess, "--tcp-buffers", "stock").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("lab up: %v: %s", err, out)
	}
	defer exec.Command(wp, "lab", "down", name).Run()
	st, err := lab.Status(name)
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "truth-group-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	key := filepath.Join(dir, "agent.key")
	line, err := exec.Command(wp, "key", "new", "truth").Output()
	if err != nil {
		return 0, fmt.Errorf("key new: %v", err)
	}
	if err := os.WriteFile(key, line, 0o600); err != nil {
		return 0, err
	}
	rmem, wmem := buffers(p)
	var procs []*exec.Cmd
	defer func() {
		for _, c := range procs {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	start := func(h string, args ...string) error {
		if out, err := exec.Command(wp, "lab", "exec", name, h, "--", "sysctl", "-q", "-w",
			fmt.Sprintf("net.ipv4.tcp_rmem=4096 131072 %d", rmem), fmt.Sprintf("net.ipv4.tcp_wmem=4096 16384 %d", wmem)).CombinedOutput(); err != nil {
			return fmt.Errorf("sysctl in %s: %v: %s", h, err, out)
		}
		c := exec.Command(wp, append([]string{"lab", "exec", name, h, "--", wp}, args...)...)
		if err := c.Start(); err != nil {
			return err
		}
		procs = append(procs, c)
		return nil
	}
	if err := start("b", "-s", "--log-level", "error"); err != nil {
		return 0, err
	}
	pairs := []string{"group"}
	for n := 1; n <= groupSenders; n++ {
		a := lab.SenderName(n)
		if err := start(a, "server", "--agent", "--agent-key-file", key, "--log-level", "error"); err != nil {
			return 0, err
		}
		pairs = append(pairs, "--pair", st.Addrs[a]+","+st.Addrs["b"])
	}
	// The servers' listen: each host's port 5201, polled for 15 s at most.
	for n := 0; n <= groupSenders; n++ {
		h := "b"
		if n > 0 {
			h = lab.SenderName(n)
		}
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			out, _ := exec.Command(wp, "lab", "exec", name, h, "--", "ss", "-Htln", "sport = :5201").Output()
			if len(bytes.TrimSpace(out)) > 0 {
				break
			}
		}
	}
	t, _ := seconds(p)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(t+120)*time.Second)
	defer cancel()
	r := &cellRun{}
	r.before, _ = lab.Status(name)
	cmd := exec.CommandContext(ctx, wp, append(append([]string{"lab", "exec", name, "s", "--", wp}, pairs...),
		"-t", fmt.Sprint(t), "--agent-key-file", key, "-J")...)
	cmd.Stdout, cmd.Stderr = &r.out, &r.errb
	began := time.Now()
	r.err = cmd.Run()
	r.secs = time.Since(began).Seconds()
	time.Sleep(1200 * time.Millisecond) // the router writes its counters every second
	r.after, _ = lab.Status(name)

	// The access links are tbf on each sender's own interface, which
	// counts 14 bytes of framing a packet (FramingTC).
	access, _ := strconv.ParseFloat(strings.TrimSuffix(groupAccess, "m"), 64)
	accessCap := lab.TCPGoodput(access*1e6, 1500, lab.FramingTC)
	pathCap := lab.TCPGoodput(p.rate, 1500, lab.FramingEthernet)
	sumCap := math.Min(pathCap, groupSenders*accessCap)
	var fails []string
	var doc groupDoc
	if err := json.Unmarshal(r.out.Bytes(), &doc); err != nil {
		fails = append(fails, fmt.Sprintf("no result: %v %s", err, firstLine(r.errb.String())))
	}
	// A router that fell behind holds what the access links delivered
	// and then sends it on at the path's rate: a pair's rows, and the
	// sum's, may then exceed the access links' rate, never the path's.
	// The report's warning flags that; the bounds become the path's.
	flagged := false
	for _, w := range doc.Warnings {
		flagged = flagged || strings.Contains(w, "fell behind")
	}
	if flagged {
		accessCap, sumCap = pathCap, pathCap
	}
	if r.err != nil {
		fails = append(fails, "exit: "+firstLine(doc.Error+" "+r.errb.String()))
	}
	var figs []string
	for _, pr := range doc.Pairs {
		if pr.Error != "" {
			fails = append(fails, pr.Sender+": "+pr.Error)
			continue
		}
		res, err := resultOf(pr.Result)
		if err != nil {
			var direct result.Result
			if json.Unmarshal(pr.Result, &direct) != nil {
				fails = append(fails, pr.Sender+": "+err.Error())
				continue
			}
			res = &direct
		}
		caps := map[string]float64{result.RoleClient: accessCap, result.RoleServer: accessCap}
		for _, f := range append(append(lab.CheckRows(res, caps), lab.CheckAddsUp(res)...), lab.CheckTotal(res, nil)...) {
			fails = append(fails, pr.Sender+": "+f)
		}
		for _, d := range res.Directions() {
			figs = append(figs, fmt.Sprintf("%.1f", d.Received.BitsPerSecond()/1e6))
		}
	}
	maxSum := 0.0
	for _, iv := range doc.Sum.Intervals {
		if iv.End-iv.Start < 0.1 || iv.Omitted {
			continue
		}
		maxSum = math.Max(maxSum, iv.Bps)
		if iv.Bps > lab.RowLimit(sumCap, iv.End-iv.Start) {
			fails = append(fails, fmt.Sprintf("[SUM] %.2f-%.2f s: %.1f Mbit/s, above the %.1f the path and access links carry", iv.Start, iv.End, iv.Bps/1e6, sumCap/1e6))
		}
	}
	if doc.Sum.ReceivedBps > (1+lab.RowTolerance)*sumCap {
		fails = append(fails, fmt.Sprintf("[SUM] total %.1f Mbit/s, above %.1f", doc.Sum.ReceivedBps/1e6, sumCap/1e6))
	}
	fails = append(fails, r.watched(doc.Warnings)...)
	verdict := "pass"
	if len(fails) > 0 {
		verdict, failed = "**FAIL**", 1
	}
	for _, f := range fails {
		fmt.Fprintf(os.Stderr, "truth: %s/%s group: %s\n", p.rtt, p.name, f)
	}
	against := fmt.Sprintf("access %.1f each, [SUM] %.1f", accessCap/1e6, sumCap/1e6)
	if flagged {
		against = fmt.Sprintf("the router fell behind (warned): every row %.1f", pathCap/1e6)
	}
	fmt.Printf("| %s, %s | group, %d senders on %s access links | %s | pairs %s; [SUM] rows max %.1f, total %.1f Mbit/s | %s | %s | %s |\n",
		p.rtt, p.name, groupSenders, groupAccess, host, strings.Join(figs, ", "), maxSum/1e6, doc.Sum.ReceivedBps/1e6, against, r.lateText(), verdict)
	return failed, nil
}
