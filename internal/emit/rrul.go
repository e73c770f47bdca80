package emit

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
)

// RRULKind is the kind of an RRUL run's JSON document.
const RRULKind = "rrul"

// RRULJSON writes an RRUL run as one JSON document: its kind and the
// whole result, series and histograms included.
type RRULJSON struct {
	W io.Writer
}

// RRULDocument is the JSON layout of an RRUL run.
type RRULDocument struct {
	Kind string       `json:"kind"` // RRULKind
	RRUL *result.RRUL `json:"rrul"`
}

// Write renders a finished run.
func (j *RRULJSON) Write(r *result.RRUL) error {
	b, err := json.MarshalIndent(RRULDocument{Kind: RRULKind, RRUL: r}, "", "  ")
	if err != nil {
		return err
	}
	_, err = j.W.Write(append(b, '\n'))
	return err
}

// RRULText writes an RRUL run's summary: each class's goodput both ways,
// the probes' RTT idle, loaded and after with the increase, what each
// probe class saw, the hosts' delays and the CPU.
type RRULText struct {
	W io.Writer
}

// Write renders a finished (or partly run) RRUL test.
func (t *RRULText) Write(r *result.RRUL) error {
	l := &textLines{}
	l.add("RRUL to %s port %d: probes alone %s s, then under %d TCP flows (one each way per class: %s) for %s s, then alone %s s",
		inert(r.Host), r.Port, num(r.IdleSeconds), len(r.Flows), strings.Join(flowClasses(r.Flows), ", "), num(r.LoadSeconds), num(r.AfterSeconds))
	l.add("")
	l.add("%-22s %-22s %s", "Goodput (receiver)", "up (client → server)", "down (server → client)")
	byClass := map[string][2]string{}
	var order []string
	for _, f := range r.Flows {
		v, seen := byClass[f.Class]
		if !seen {
			order = append(order, f.Class)
		}
		cell := fmt.Sprintf("%.2f Mbit/s", f.BitsPerSecond/1e6)
		if f.Error != "" && f.Bytes == 0 {
			cell = "failed"
		}
		if f.Direction == "up" {
			v[0] = cell
		} else {
			v[1] = cell
		}
		byClass[f.Class] = v
	}
	for _, c := range order {
		l.add("  %-20s %-22s %s", fmt.Sprintf("%s (TOS 0x%02x)", c, tosOf(r.Flows, c)), byClass[c][0], byClass[c][1])
	}
	l.add("  %-20s %-22s %s", "total", fmt.Sprintf("%.2f Mbit/s", r.UpBitsPerSecond/1e6), fmt.Sprintf("%.2f Mbit/s", r.DownBitsPerSecond/1e6))
	if line := rrulCongestion(r); line != "" {
		l.add("%s", line)
	}
	l.add("")
	lat := r.Latency
	l.add("%-46s %8s  %8s  %8s  %7s", "Latency: UDP round trips of every probe (ms)", "p50", "p90", "p99", "probes")
	row := func(name string, p result.Percentiles) {
		if p.Count == 0 {
			l.add("  %-44s %9s", name, "none")
			return
		}
		l.add("  %-44s %8.3f  %8.3f  %8.3f  %7d", name, p.P50/1e3, p.P90/1e3, p.P99/1e3, p.Count)
	}
	row("idle (before the load)", lat.Idle)
	row("loaded", lat.Loaded)
	row("after the load", lat.After)
	if lat.Idle.Count > 0 && lat.Loaded.Count > 0 {
		in := lat.Increase
		l.add("  %-44s %+8.3f  %+8.3f  %+8.3f", "loaded − idle", in.P50/1e3, in.P90/1e3, in.P99/1e3)
	}
	l.add("")
	l.add("%-21s  %8s  %10s  %10s   %s", "Per probe class (ms)", "idle p50", "loaded p50", "loaded p99", "lost (idle/loaded/after)")
	for _, p := range r.Probes {
		ph := map[string]result.RRPoint{}
		for _, pt := range p.Phases {
			ph[pt.Label] = pt
		}
		if p.Error != "" && len(p.Phases) == 0 {
			l.add("  UDP %-4s failed: %s", p.Class, p.Error)
			continue
		}
		idle, loaded, after := ph["idle"], ph["loaded"], ph["after"]
		l.add("  UDP %-4s (TOS 0x%02x)  %8.3f  %10.3f  %10.3f   %d/%d/%d", p.Class, p.TOS, idle.RTT.P50/1e3, loaded.RTT.P50/1e3, loaded.RTT.P99/1e3,
			idle.Lost, loaded.Lost, after.Lost)
	}
	if lat.Idle.Count > 0 && lat.Loaded.Count > 0 && lat.Increase.P50 > 1000 && lat.Increase.P50 > lat.Idle.P50 && len(r.HostDelays) == 0 {
		l.add("The load more than doubles the RTT: the bottleneck's queues hold about %.1f ms of data (bufferbloat)", lat.Increase.P50/1e3)
	}
	for _, h := range r.HostDelays {
		l.add("WARNING: in the %s phase the %s added delay (%.3f ms at p99): %s", h.Phase, h.Host, h.AddedUs/1e3, h.Reason)
	}
	cpu := fmt.Sprintf("CPU: client %.1f%% (user %.1f%%, system %.1f%%)", r.CPU.TotalPercent, r.CPU.UserPercent, r.CPU.SystemPercent)
	if c := r.ServerCPU; c != nil {
		cpu += fmt.Sprintf(", server %.1f%% (user %.1f%%, system %.1f%%)", c.TotalPercent, c.UserPercent, c.SystemPercent)
	}
	l.add("%s", cpu)
	for _, w := range r.Warnings {
		l.add("warning: %s", inert(w))
	}
	if r.Error != "" {
		l.add("error: %s", inert(r.Error))
	}
	_, err := io.WriteString(t.W, l.b.String())
	return err
}

// rrulCongestion names the flows' congestion control per direction, as
// the senders' kernels reported it, and whether it was asked (-C) or
// each sender's host's default: the queue a loss-based algorithm builds
// is not the one a model-based one does.
func rrulCongestion(r *result.RRUL) string {
	var parts []string
	for _, dir := range []string{"up", "down"} {
		var names []string
		for _, f := range r.Flows {
			if f.Direction == dir && f.Congestion != "" && !slices.Contains(names, f.Congestion) {
				names = append(names, f.Congestion)
			}
		}
		if len(names) > 0 {
			parts = append(parts, dir+" "+inert(strings.Join(names, "/")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	how := "each sender's host's default"
	if r.Congestion != "" {
		how = "asked: -C " + inert(r.Congestion)
	}
	return fmt.Sprintf("  congestion control: %s (%s)", strings.Join(parts, ", "), how)
}

func flowClasses(fs []result.RRULFlow) []string {
	var out []string
	for _, f := range fs {
		if len(out) == 0 || out[len(out)-1] != f.Class {
			out = append(out, f.Class)
		}
	}
	return out
}

func tosOf(fs []result.RRULFlow, class string) int {
	for _, f := range fs {
		if f.Class == class {
			return f.TOS
		}
	}
	return 0
}

// num prints seconds without trailing zeros.
func num(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}
