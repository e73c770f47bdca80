// Command truth runs the truth matrix (docs/truth.md): wireperf over the
// lab's paths, quiet and beside a CPU hog, with every printed figure held
// to the lab's counters and the framing arithmetic (internal/lab's
// Check* functions). bench/truth.sh runs it. It needs root; the labs'
// namespaces carry names unique to the run and are removed at the end,
// and every test is bounded by -t.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/result"
)

type path struct {
	rtt  string
	rate float64
	name string // the --rate value
}

type cell struct {
	name string
	args []string
	udp  bool
	rr   bool
	// omitted: the test leaves slow start out (-O), so its receiver
	// total is held to the arithmetic too.
	omitted bool
}

func main() {
	wp := flag.String("wireperf", os.Getenv("WIREPERF"), "the wireperf binary")
	short := flag.Bool("short", false, "one path (19 ms, 622m), quiet only")
	hogOnly := flag.Bool("hog-only", false, "run the loaded half only")
	quietOnly := flag.Bool("quiet-only", false, "run the quiet half only")
	only := flag.String("paths", "", "run only these paths, e.g. 19ms/622m,215ms/1g")
	matrix := flag.String("matrix", "all", "client (the client's cells on nine paths), commands (rr, rr --load, udpmon, advise and sweep on 1 ms/1g, 19 ms/622m and 215 ms/1g) or all")
	cellsFlag := flag.String("cells", "", "with the commands' matrix: only the cells whose name starts with one of these, e.g. udpmon,rr")
	flag.Parse()
	onlyCells = *cellsFlag
	if *matrix != "all" && *matrix != "client" && *matrix != "commands" {
		fmt.Fprintln(os.Stderr, "truth: -matrix: want client, commands or all")
		os.Exit(2)
	}
	if *wp == "" {
		fmt.Fprintln(os.Stderr, "truth: give the binary: WIREPERF=./wireperf bench/truth.sh")
		os.Exit(2)
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "truth: needs root (network namespaces, TUN devices)")
		os.Exit(2)
	}
	paths := []path{}
	for _, rtt := range []string{"0.2ms", "19ms", "215ms"} {
		for _, r := range []struct {
			name string
			bps  float64
		}{{"100m", 100e6}, {"622m", 622e6}, {"1g", 1e9}} {
			paths = append(paths, path{rtt, r.bps, r.name})
		}
	}
	cmdPaths := commandPaths
	if *only != "" {
		paths, cmdPaths = keepPaths(paths, *only), keepPaths(cmdPaths, *only)
	}
	loads := []bool{false, true}
	if *short {
		paths, cmdPaths, loads = []path{{"19ms", 622e6, "622m"}}, nil, []bool{false}
	}
	switch *matrix {
	case "client":
		cmdPaths = nil
	case "commands":
		paths = nil
	}
	if *hogOnly {
		loads = []bool{true}
	}
	if *quietOnly {
		loads = []bool{false}
	}
	// A signal ends the run cleanly: the current lab is taken down.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed := 0
	if len(paths) > 0 {
		fmt.Println("| path | test | host | receiver rows (max, Mbit/s) | receiver total | router output lost | verdict |")
		fmt.Println("|---|---|---|---|---|---|---|")
	}
	for _, hog := range loads {
		for i, p := range paths {
			if ctx.Err() != nil {
				break
			}
			n, err := runPath(ctx, *wp, fmt.Sprintf("tr%d%d", os.Getpid()%1000, i), p, hog, false)
			failed += n
			if err != nil {
				fmt.Fprintf(os.Stderr, "truth: %s/%s: %v\n", p.rtt, p.name, err)
				failed++
			}
		}
	}
	if len(cmdPaths) > 0 {
		fmt.Println()
		fmt.Println("| path | command | host | figures (ms, Mbit/s, datagrams) | held to | router output lost | verdict |")
		fmt.Println("|---|---|---|---|---|---|---|")
	}
	for _, hog := range loads {
		for i, p := range cmdPaths {
			if ctx.Err() != nil {
				break
			}
			n, err := runPath(ctx, *wp, fmt.Sprintf("tc%d%d", os.Getpid()%1000, i), p, hog, true)
			failed += n
			if err != nil {
				fmt.Fprintf(os.Stderr, "truth: %s/%s: %v\n", p.rtt, p.name, err)
				failed++
			}
		}
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "truth: %d cells failed\n", failed)
		os.Exit(1)
	}
}

// onlyCells is -cells.
var onlyCells string

// keepPaths are the paths named in only, e.g. "19ms/622m,215ms/1g".
func keepPaths(paths []path, only string) []path {
	var keep []path
	for _, p := range paths {
		if strings.Contains(","+only+",", ","+p.rtt+"/"+p.name+",") {
			keep = append(keep, p)
		}
	}
	return keep
}

// seconds is each test's -t and -O on a path: long enough for slow start
// to be a small part of it, and for -O to hold all of it.
func seconds(p path) (t, omit int) {
	if p.rtt == "215ms" {
		return 20, 5
	}
	return 10, 2
}

func cells(p path) []cell {
	t, o := seconds(p)
	ts, omit := fmt.Sprint(t), fmt.Sprint(o)
	udpRate := 0.9 * lab.Goodput(p.rate, 1500, 28, lab.FramingEthernet)
	// TCP runs CUBIC: BBR, this machine's default, drains its queue for
	// 200 ms every 10 s (ProbeRTT, cwnd 4), which costs about 2% of a
	// test's goodput by design and would read as a shortfall here.
	cc := []string{"-C", "cubic"}
	tcp := func(args ...string) []string { return append(append([]string{}, cc...), args...) }
	return []cell{
		{name: "-P 1 -O", args: tcp("-t", ts, "-O", omit), omitted: true},
		{name: "-P 1", args: tcp("-t", ts)},
		{name: "-P 4", args: tcp("-t", ts, "-P", "4")},
		{name: "-R -O", args: tcp("-t", ts, "-O", omit, "-R"), omitted: true},
		{name: "--bidir", args: tcp("-t", ts, "--bidir")},
		{name: "UDP 90%", args: []string{"-t", ts, "-u", "-b", fmt.Sprintf("%.0f", udpRate)}, udp: true},
		{name: "rr --load", args: []string{"--load", "tcp,2", "--load-time", ts}, rr: true},
	}
}

// runPath runs one path's cells, the client's or (commands) the other
// commands', on a lab of its own.
func runPath(ctx context.Context, wp, name string, p path, hog, commands bool) (failed int, err error) {
	if out, err := exec.Command(wp, "lab", "up", name, "--rtt", p.rtt, "--rate", p.name, "--tcp-buffers", "stock").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("lab up: %v: %s", err, out)
	}
	defer exec.Command(wp, "lab", "down", name).Run()
	rmem, wmem := buffers(p)
	for _, h := range []string{"a", "b"} {
		if out, err := exec.Command(wp, "lab", "exec", name, h, "--", "sysctl", "-q", "-w",
			fmt.Sprintf("net.ipv4.tcp_rmem=4096 131072 %d", rmem), fmt.Sprintf("net.ipv4.tcp_wmem=4096 16384 %d", wmem)).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("sysctl: %v: %s", err, out)
		}
	}
	srv := exec.Command(wp, "lab", "exec", name, "b", "--", wp, "-s", "--log-level", "error")
	if err := srv.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	time.Sleep(500 * time.Millisecond) // the server's listen; a refused first connection retries below
	if hog {
		stop := startHog()
		defer stop()
	}
	host := "quiet"
	if hog {
		host = "2 busy loops"
	}
	if commands {
		for _, c := range commandCells() {
			if ctx.Err() != nil {
				return failed, ctx.Err()
			}
			if !selected(c.name, onlyCells) {
				continue
			}
			figs, against, fails, r := c.run(ctx, wp, name, p)
			verdict := "pass"
			if len(fails) > 0 {
				verdict, failed = "**FAIL**", failed+1
			}
			for _, f := range fails {
				fmt.Fprintf(os.Stderr, "truth: %s/%s %s: %s\n", p.rtt, p.name, c.name, f)
			}
			fmt.Printf("| %s, %s | %s | %s | %s | %s | %s | %s |\n", p.rtt, p.name, c.name, host, figs, against, r.lateText(), verdict)
		}
		if selected("group", onlyCells) && ctx.Err() == nil {
			n, err := runGroupPath(ctx, wp, name+"g", p, host)
			if err != nil {
				fmt.Fprintf(os.Stderr, "truth: %s/%s group: %v\n", p.rtt, p.name, err)
				n++
			}
			failed += n
		}
		return failed, nil
	}
	capacity := lab.TCPGoodput(p.rate, 1500, lab.FramingEthernet)
	for _, c := range cells(p) {
		if ctx.Err() != nil {
			return failed, ctx.Err()
		}
		line, ok := runCell(ctx, wp, name, p, c, capacity)
		verdict := "pass"
		if !ok {
			verdict, failed = "**FAIL**", failed+1
		}
		fmt.Printf("| %s, %s | %s | %s | %s | %s |\n", p.rtt, p.name, c.name, host, line, verdict)
	}
	return failed, nil
}

// buffers are the hosts' autotuning limits on a path: a receive buffer of
// 4 BDPs (Linux advertises about half of it) and a send buffer of 2, at
// least Linux's defaults (6 and 4 MiB). Larger send buffers hold tens of
// megabytes unsent when the sender stops, which this kernel then drains
// at about half the path's rate (seen at 19 ms with 128 MiB: 0.49 s at
// 330 Mbit/s, the same before this work), and the totals would measure
// that, not the path.
func buffers(p path) (rmem, wmem int64) {
	ms, _ := time.ParseDuration(p.rtt)
	bdp := int64(p.rate * ms.Seconds() / 8)
	return max(6<<20, 4*bdp), max(4<<20, 2*bdp)
}

// startHog runs two busy loops at nice 0, the CPU hog of the matrix's
// loaded half, until stop.
func startHog() (stop func()) {
	var cmds []*exec.Cmd
	for range 2 {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if c.Start() == nil {
			cmds = append(cmds, c)
		}
	}
	return func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

// runCell runs one test and checks it; it returns the table's middle
// columns and whether every check passed.
func runCell(ctx context.Context, wp, name string, p path, c cell, capacity float64) (string, bool) {
	t, _ := seconds(p)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(t+90)*time.Second)
	defer cancel()
	before, _ := lab.Status(name)
	args := append([]string{"lab", "exec", name, "a", "--", wp}, c.args...)
	if c.rr {
		args = append(args[:6], append([]string{"rr", "10.77.2.2"}, c.args...)...)
	} else {
		args = append(args, "-c", "10.77.2.2")
	}
	args = append(args, "-J")
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, wp, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	runErr := cmd.Run()
	wall := time.Since(began).Seconds()
	time.Sleep(1200 * time.Millisecond) // the router writes its counters every second
	after, _ := lab.Status(name)
	res, perr := resultOf(out.Bytes())
	switch {
	case perr != nil:
		return fmt.Sprintf("no result: %v %s | - | - ", perr, firstLine(errb.String())), false
	case runErr != nil && c.rr:
		return fmt.Sprintf("exit: %s | - | - ", firstLine(res.Error)), false
	}
	var fails []string
	late := "-"
	var idle time.Duration
	if before != nil && after != nil {
		idle = lab.RouterIdle(before.Router, after.Router)
		late = fmt.Sprintf("%.1f ms", float64(idle)/1e6)
	}
	// The client watched the lab as every command does: the router's
	// warning when it held the test back (a UDP test's PDV on a path
	// without jitter is the router's lateness, not the path's), and the
	// host's buffers named.
	fails = append(fails, (&cellRun{before: before, after: after, secs: wall}).watched(res.Warnings)...)
	if !strings.Contains(res.Lab, "TCP buffers") {
		fails = append(fails, fmt.Sprintf("the report does not name the lab's buffers: lab %q", res.Lab))
	}
	if c.rr {
		if r := res.Local.RR; r != nil && r.Load != nil {
			for _, ph := range r.Load.Phases {
				if ph.Incomplete {
					fails = append(fails, fmt.Sprintf("%s phase ran %.2f of %.2f s", ph.Label, ph.Seconds, ph.PlannedSeconds))
				}
			}
		}
		return fmt.Sprintf("phases complete: %v | - | %s", len(fails) == 0, late), len(fails) == 0 && runErr == nil
	}
	caps := map[string]float64{result.RoleClient: capacity, result.RoleServer: capacity}
	if c.udp {
		udpCap := lab.Goodput(p.rate, 1500, 28, lab.FramingEthernet)
		caps = map[string]float64{result.RoleClient: udpCap}
		drops := map[string]int64{}
		if before != nil && after != nil {
			drops[result.RoleClient] = int64(after.Router.AtoB.Lost() - before.Router.AtoB.Lost())
		}
		fails = append(fails, lab.CheckUDPLoss(res, drops)...)
		fails = append(fails, lab.CheckNoFalseWarnings(res)...)
	}
	fails = append(fails, lab.CheckRows(res, caps)...)
	fails = append(fails, lab.CheckAddsUp(res)...)
	// The arithmetic holds where one stream fills the path after -O. At
	// 215 ms CUBIC does not: after slow start's losses it takes tens of
	// seconds to grow back (K = ∛(W·β/C), about 25 s at 1 Gbit/s), and
	// its total is what it carried, held to its rows' mean instead.
	var want map[string]lab.Arithmetic
	if c.omitted && p.rtt != "215ms" {
		role := result.RoleClient
		if strings.Contains(c.name, "-R") {
			role = result.RoleServer
		}
		want = map[string]lab.Arithmetic{role: {Rate: capacity, RouterIdle: idle}}
	}
	fails = append(fails, lab.CheckTotal(res, want)...)
	if runErr != nil {
		fails = append(fails, "exit: "+firstLine(errb.String()))
	}
	maxRow, totals := 0.0, []string{}
	for _, row := range res.IntervalRows() {
		for _, role := range []string{result.RoleClient, result.RoleServer} {
			s := row.SumDirection(role)
			if secs := s.ReceivedSpan.Seconds(); s.HasReceived && secs >= 0.1 && !row.Omitted {
				maxRow = math.Max(maxRow, result.Rate(s.ReceivedBytes, secs))
			}
		}
	}
	for _, d := range res.Directions() {
		totals = append(totals, fmt.Sprintf("%.1f", d.Received.BitsPerSecond()/1e6))
	}
	for _, f := range fails {
		fmt.Fprintf(os.Stderr, "truth: %s/%s %s: %s\n", p.rtt, p.name, c.name, f)
	}
	return fmt.Sprintf("%.1f (capacity %.1f) | %s | %s", maxRow/1e6, caps[result.RoleClient]/1e6, strings.Join(totals, ", "), late), len(fails) == 0
}

// resultOf reads the wireperf extension's result from a -J document.
func resultOf(doc []byte) (*result.Result, error) {
	var d struct {
		Wireperf *struct {
			Result *result.Result `json:"result"`
		} `json:"wireperf"`
		Result *result.Result `json:"result"` // rr -J: {"kind": "rr", "result": …}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	switch {
	case d.Wireperf != nil && d.Wireperf.Result != nil:
		return d.Wireperf.Result, nil
	case d.Result != nil:
		return d.Result, nil
	}
	return nil, errors.New("no wireperf result in the document")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// selected says whether a cell is among those named in only (each a
// prefix of its name; all when only is empty).
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if o != "" && strings.HasPrefix(name, o) {
			return true
		}
	}
	return false
}
