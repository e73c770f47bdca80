package main

// The probes' and the daemon's cells: ping and tcp-connect counted
// against the lab's router and the receiving host's own kernel counters,
// their times held to the path; a task that `wireperf daemon` runs through
// the lab, its stored result held as the client's cells hold the client's
// (docs/truth.md, "Every command").

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/result"
)

// probeCount is how many probes a probe cell sends, 20 ms apart.
const probeCount = 100

// probeDoc is the part of ping's and tcp-connect's -J the cells read.
type probeDoc struct {
	Ping *struct {
		Sent, Received, Duplicates int64
		RTT                        probeTimes `json:"rtt_us"`
	} `json:"ping"`
	Connect *connectDoc `json:"tcp_connect"`
	Error   string      `json:"error"`
}

// connectDoc is tcp-connect's part: Times are the kernel's handshake
// times where it timed them (KernelTimed of them), UserSpace the dials'.
type connectDoc struct {
	Attempts, Connected, Refused, Failed int64
	TimedOut                             int64      `json:"timed_out"`
	Times                                probeTimes `json:"connect_us"`
	KernelTimed                          int64      `json:"kernel_timed"`
	UserSpace                            probeTimes `json:"connect_user_us"`
	HostDelay                            *struct {
		Host      string
		Attempts  int64
		UserMaxUs float64  `json:"user_max_us"`
		WithoutUs *float64 `json:"without_host_delayed_us"`
	} `json:"host_delay"`
}

type probeTimes struct {
	Count         int64
	Min, P99, Max float64
}

// snmp reads one of host b's /proc/net/snmp counters (e.g. "Icmp",
// "InEchos"): the receiving host's own count, per network namespace.
func snmp(ctx context.Context, wp, name, host, group, field string) (int64, error) {
	out, err := exec.CommandContext(ctx, wp, "lab", "exec", name, host, "--", "cat", "/proc/net/snmp").Output()
	if err != nil {
		return 0, err
	}
	return snmpField(string(out), group, field)
}

// snmpField takes one counter out of /proc/net/snmp's text: a line of
// names, then a line of values, per group.
func snmpField(text, group, field string) (int64, error) {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != group+":" || len(values) != len(names) || values[0] != group+":" {
			continue
		}
		for k, n := range names {
			if n == field {
				return strconv.ParseInt(values[k], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("/proc/net/snmp has no %s %s", group, field)
}

// checkProbeTimes holds probe times (µs) to the path: none below its floor
// (less 1% for the clocks' reading), none above its bound.
func checkProbeTimes(what string, t probeTimes, floor, bound time.Duration) []string {
	var fails []string
	if t.Count == 0 {
		return []string{what + ": no times"}
	}
	if min := time.Duration(t.Min * 1e3); min < floor*99/100 {
		fails = append(fails, fmt.Sprintf("%s min %.2f ms, below the path's floor %.2f ms", what, t.Min/1e3, floor.Seconds()*1e3))
	}
	if max := time.Duration(t.Max * 1e3); max > bound {
		fails = append(fails, fmt.Sprintf("%s max %.2f ms, above the path's bound and the router's lateness, %.2f ms", what, t.Max/1e3, bound.Seconds()*1e3))
	}
	return fails
}

// checkPing holds ping's counts to the router's and host b's: every
// request the router passed reached b's kernel (InEchos) and each answer
// came back, lost ones are the router's drops, and no duplicates but the
// router's.
func checkPing(d *probeDoc, routerIn, routerLost, routerDup, inEchos int64) []string {
	p := d.Ping
	if p == nil {
		return []string{"no ping result: " + d.Error}
	}
	var fails []string
	if p.Sent != probeCount {
		fails = append(fails, fmt.Sprintf("sent %d of %d", p.Sent, probeCount))
	}
	if lost := p.Sent - p.Received; lost != routerLost {
		fails = append(fails, fmt.Sprintf("lost %d (sent %d, received %d), the router dropped %d", lost, p.Sent, p.Received, routerLost))
	}
	if p.Duplicates != routerDup {
		fails = append(fails, fmt.Sprintf("%d duplicates, the router duplicated %d", p.Duplicates, routerDup))
	}
	if inEchos < p.Received || routerIn < p.Sent {
		fails = append(fails, fmt.Sprintf("b's kernel took %d requests and the router %d packets, fewer than the %d sent and %d answered", inEchos, routerIn, p.Sent, p.Received))
	}
	return fails
}

// checkConnect holds tcp-connect's counts to host b's listener (its
// kernel's PassiveOpens: the handshakes it completed) and to themselves.
func checkConnect(d *probeDoc, passiveOpens int64) []string {
	c := d.Connect
	if c == nil {
		return []string{"no tcp-connect result: " + d.Error}
	}
	var fails []string
	if c.Attempts != probeCount || c.Connected+c.Refused+c.TimedOut+c.Failed != c.Attempts {
		fails = append(fails, fmt.Sprintf("attempts %d (want %d) = connected %d + refused %d + timed out %d + failed %d", c.Attempts, probeCount, c.Connected, c.Refused, c.TimedOut, c.Failed))
	}
	if c.Connected != passiveOpens {
		fails = append(fails, fmt.Sprintf("connected %d, b's listener completed %d handshakes", c.Connected, passiveOpens))
	}
	return fails
}

// checkConnectHost holds tcp-connect's user-space times to the path: a
// dial's max above the bound is the client host's, so a flag must name
// the client, for that max, and the dials it did not delay must be within
// the bound.
func checkConnectHost(c *connectDoc, bound time.Duration) []string {
	if c == nil || time.Duration(c.UserSpace.Max*1e3) <= bound {
		return nil
	}
	d := c.HostDelay
	switch {
	case d == nil:
		return []string{fmt.Sprintf("connect (user space) max %.2f ms, above the path's bound %.2f ms, and no host flagged", c.UserSpace.Max/1e3, bound.Seconds()*1e3)}
	case d.Host != "client" || d.UserMaxUs != c.UserSpace.Max:
		return []string{fmt.Sprintf("host delay flag names %q for max %.2f ms, the dials' max is %.2f ms", d.Host, d.UserMaxUs/1e3, c.UserSpace.Max/1e3)}
	case d.WithoutUs != nil && time.Duration(*d.WithoutUs*1e3) > bound:
		return []string{fmt.Sprintf("connect (user space) max %.2f ms without the host-delayed dials, above the path's bound %.2f ms", *d.WithoutUs/1e3, bound.Seconds()*1e3)}
	}
	return nil
}

// runProbe runs ping (raw socket) or tcp-connect from a to b, probeCount
// probes 20 ms apart, and holds it to the router and b (see checkPing and
// checkConnect) and its times to the path.
func runProbe(kind string) func(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
	return func(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
		group, field := "Icmp", "InEchos"
		args := []string{"ping", "10.77.2.2", "--raw"}
		if kind == "tcp-connect" {
			group, field = "Tcp", "PassiveOpens"
			args = []string{"tcp-connect", "10.77.2.2:5201"}
		}
		args = append(args, "--count", strconv.Itoa(probeCount), "--interval", "20ms", "-J")
		before, err := snmp(ctx, wp, name, "b", group, field)
		if err != nil {
			return "-", "-", []string{err.Error()}, &cellRun{}
		}
		r := runInLab(ctx, wp, name, 120*time.Second, args...)
		after, err := snmp(ctx, wp, name, "b", group, field)
		if err != nil || r.before == nil || r.after == nil {
			return "-", "-", []string{fmt.Sprintf("counters: %v", err)}, r
		}
		var d probeDoc
		if err := json.Unmarshal(r.out.Bytes(), &d); err != nil {
			return "no result", "-", []string{fmt.Sprintf("%v %s", err, firstLine(r.errb.String()))}, r
		}
		lim, err := limitsOf(r.after)
		if err != nil {
			return "-", "-", []string{err.Error()}, r
		}
		bound := lim.bound + routerLate(r.after)
		ab, ba := r.after.Router.AtoB, r.after.Router.BtoA
		ab0, ba0 := r.before.Router.AtoB, r.before.Router.BtoA
		lost := int64(ab.Lost()-ab0.Lost()) + int64(ba.Lost()-ba0.Lost())
		var fails []string
		var figs string
		var times probeTimes
		if kind == "ping" {
			dup := int64(ab.Duplicated-ab0.Duplicated) + int64(ba.Duplicated-ba0.Duplicated)
			fails = checkPing(&d, int64(ab.In-ab0.In), lost, dup, after-before)
			if d.Ping != nil {
				times = d.Ping.RTT
				figs = fmt.Sprintf("sent %d, received %d, dup %d; b took %d; RTT min %.2f p99 %.2f max %.2f ms",
					d.Ping.Sent, d.Ping.Received, d.Ping.Duplicates, after-before, times.Min/1e3, times.P99/1e3, times.Max/1e3)
			}
		} else {
			fails = checkConnect(&d, after-before)
			fails = append(fails, checkConnectHost(d.Connect, bound)...)
			if c := d.Connect; c != nil {
				times = c.Times
				figs = fmt.Sprintf("connected %d of %d; b's listener %d; handshake (kernel's, %d) min %.2f p99 %.2f max %.2f ms; dial max %.2f ms",
					c.Connected, c.Attempts, after-before, c.KernelTimed, times.Min/1e3, times.P99/1e3, times.Max/1e3, c.UserSpace.Max/1e3)
				if h := c.HostDelay; h != nil {
					figs += fmt.Sprintf(", %d flagged %s", h.Attempts, h.Host)
				}
			}
		}
		if r.err != nil {
			fails = append(fails, "exit: "+firstLine(d.Error+" "+r.errb.String()))
		}
		fails = append(fails, checkProbeTimes(kind, times, lim.floor, bound)...)
		against := fmt.Sprintf("router lost %d; floor %.2f, bound %.2f ms", lost, lim.floor.Seconds()*1e3, bound.Seconds()*1e3)
		return figs, against, fails, r
	}
}

// runDaemon runs `wireperf daemon` in host a with a throw-away SQLite
// archive and one task, a client test to b that runs once, a few seconds
// after the daemon starts; once the run is stored it stops the daemon and
// holds the stored result as the sweep's cell holds its runs, and its
// lab line to the buffers the host runs.
func runDaemon(ctx context.Context, wp, name string, p path) (string, string, []string, *cellRun) {
	dir, err := os.MkdirTemp("", "truth-daemon-")
	if err != nil {
		return "-", "-", []string{err.Error()}, &cellRun{}
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "a.db")
	cfg := filepath.Join(dir, "daemon.yaml")
	conf := fmt.Sprintf("host: a\ndb: %s\nlisten: 127.0.0.1:5280\nport: 0\nplan_every: 1s\nspool_dir: %s\n", db, filepath.Join(dir, "spool"))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		return "-", "-", []string{err.Error()}, &cellRun{}
	}
	t, _ := seconds(p)
	start := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339)
	if out, err := exec.CommandContext(ctx, wp, "task", "add", "--db", db, "--name", "truth", "--source", "a", "--dest", "b",
		"--addr", "10.77.2.2:5201", "--test", fmt.Sprintf("client -t %d -C cubic", t), "--start", start, "--slip", "30s", "--max-runs", "1").CombinedOutput(); err != nil {
		return "-", "-", []string{fmt.Sprintf("task add: %v: %s", err, firstLine(string(out)))}, &cellRun{}
	}
	r := &cellRun{}
	r.before, _ = lab.Status(name)
	daemon := exec.Command(wp, "lab", "exec", name, "a", "--", wp, "daemon", "--config", cfg, "--log-level", "warn")
	daemon.Stderr = &r.errb
	began := time.Now()
	if err := daemon.Start(); err != nil {
		return "-", "-", []string{err.Error()}, r
	}
	// The run is stored once it ends: poll the archive, bounded by the
	// test's length and a minute.
	var id string
	for deadline := time.Now().Add(time.Duration(t)*time.Second + time.Minute); id == "" && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(time.Second) // the archive has no event to wait on from here
		out, err := exec.CommandContext(ctx, wp, "runs", "--db", db, "-J").Output()
		var runs []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		}
		if err == nil && json.Unmarshal(out, &runs) == nil && len(runs) > 0 && runs[0].State != "" && runs[0].State != "running" {
			id = runs[0].ID
		}
	}
	_ = daemon.Process.Signal(syscall.SIGTERM)
	_ = daemon.Wait()
	r.secs = time.Since(began).Seconds()
	time.Sleep(1200 * time.Millisecond) // the router writes its counters every second
	r.after, _ = lab.Status(name)
	if id == "" {
		return "-", "-", []string{"the daemon stored no finished run: " + firstLine(r.errb.String())}, r
	}
	doc, err := exec.CommandContext(ctx, wp, "show", id, "--db", db, "-J").Output()
	if err != nil {
		return "-", "-", []string{fmt.Sprintf("show %s: %v", id, err)}, r
	}
	res, err := resultOf(doc)
	if err != nil {
		return "-", "-", []string{fmt.Sprintf("show %s: %v", id, err)}, r
	}
	capacity := lab.TCPGoodput(p.rate, 1500, lab.FramingEthernet)
	caps := map[string]float64{result.RoleClient: capacity, result.RoleServer: capacity}
	fails := append(append(lab.CheckRows(res, caps), lab.CheckAddsUp(res)...), lab.CheckTotal(res, nil)...)
	if res.Error != "" {
		fails = append(fails, "the stored run failed: "+res.Error)
	}
	if !strings.Contains(res.Lab, "TCP buffers") {
		fails = append(fails, fmt.Sprintf("the stored result does not name the lab's buffers: lab %q", res.Lab))
	}
	fails = append(fails, r.watched(res.Warnings)...)
	var figs []string
	for _, d := range res.Directions() {
		figs = append(figs, fmt.Sprintf("%.1f", d.Received.BitsPerSecond()/1e6))
	}
	return "stored run " + strings.Join(figs, ", ") + " Mbit/s", fmt.Sprintf("capacity %.1f", capacity/1e6), fails, r
}
