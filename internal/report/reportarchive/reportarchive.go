// Package reportarchive assembles `wireperf report`'s page from the
// archive: a campaign's spec, hosts, table, figures and runs, or one run,
// as report.Section values that package report renders. The static
// figures are written beside the page as it goes.
package reportarchive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
	"github.com/wireperf/wireperf/internal/report"
	"github.com/wireperf/wireperf/internal/resultjson"
)

// maxRunFigures bounds the static per-run figures one campaign writes; the
// remaining runs keep their tables and interactive charts.
const maxRunFigures = 24

// Run is one run's section, outside any campaign's: its hosts, the
// verdict of an advise report, its detail and figures (written into dir).
func Run(r *archive.Run, dir string) report.Section {
	s := report.Section{Name: "run " + r.ID}
	if r.Campaign != "" {
		s.Name += " of campaign " + r.Campaign
	}
	s.Hosts = hostsOf([]*archive.Run{r})
	s.Verdicts = sectionVerdicts([]*archive.Run{r})
	s.Runs = []report.Run{runDetail(r, dir, true)}
	return s
}

// CampaignsSince names the campaigns with runs started at since or later,
// sorted.
func CampaignsSince(ctx context.Context, store *archive.Store, since time.Time) ([]string, error) {
	runs, err := store.List(ctx, archive.Filter{Since: since})
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Campaign != "" && !seen[r.Campaign] {
			seen[r.Campaign] = true
			names = append(names, r.Campaign)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Campaign is one campaign's part of the page: its spec, hosts,
// table, figures and runs. Its figures are written into dir.
func Campaign(ctx context.Context, store *archive.Store, name, dir string) (report.Section, error) {
	c, err := store.GetCampaign(ctx, name)
	if err != nil {
		return report.Section{}, err
	}
	s := report.Section{Name: "campaign " + name, Created: c.Created}
	s.Spec, s.SpecFormat = readableSpec(c.Spec, c.SpecFormat)
	listed, err := store.List(ctx, archive.Filter{Campaign: name})
	if err != nil {
		return s, err
	}
	if len(listed) == 0 {
		s.Empty = "This campaign has no runs yet: nothing to show."
		return s, nil
	}
	// Get fills in what List leaves out: intervals and host limits.
	runs := make([]*archive.Run, 0, len(listed))
	for _, r := range listed {
		full, err := store.Get(ctx, r.ID)
		if err != nil {
			return s, err
		}
		runs = append(runs, full)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Seq < runs[j].Seq })
	s.Verdicts = sectionVerdicts(runs)
	s.Hosts = hostsOf(runs)
	footer := plotarchive.CampaignFooter(name, append([]*archive.Run(nil), runs...))
	rows, cols := tableAxes(runs)
	if t, value := tablePivot(runs, rows, cols); t != nil {
		s.Table = &report.Table{
			Caption: fmt.Sprintf("%s, mean over repetitions (min–max, n=runs)", value),
			Grid:    pivotfmt.Grid(t),
		}
		s.CPU = cpuTables(runs, rows, cols)
		addCampaignFigures(&s, t, footer, name, dir)
		if plotarchive.IsUDPMonCampaign(runs) {
			if in, err := plotarchive.UDPMonCampaignOf(runs, name, footer); err == nil {
				if fig, err := plot.UDPMon(in); err == nil {
					s.Figures = append(s.Figures, saveFigure(fig, dir, name+"-udpmon", in.Title, "", true))
				}
			}
		}
	} else {
		s.Empty = "This campaign has no finished runs with a summary value to tabulate."
	}
	for i, r := range runs {
		s.Runs = append(s.Runs, runDetail(r, dir, i < maxRunFigures))
	}
	return s, nil
}

// tableAxes picks the table's axes: the campaign's axes whose values
// differ between runs, in the order a sweep draws them best along x.
func tableAxes(runs []*archive.Run) (rows, cols string) {
	order := []string{campaign.AxisWindow, campaign.AxisTime, campaign.AxisLength, campaign.AxisSpacing,
		campaign.AxisBitrate, campaign.AxisParallel, campaign.AxisSetMSS}
	for _, a := range campaign.AxisNames() {
		if !slices.Contains(order, a) {
			order = append(order, a)
		}
	}
	var varying, constant []string
	for _, axis := range order {
		keys := map[string]bool{}
		for _, r := range runs {
			if a, ok := r.Axes[axis]; ok {
				keys[a.Key()] = true
			}
		}
		switch {
		case len(keys) > 1:
			varying = append(varying, axis)
		case len(keys) == 1:
			constant = append(constant, axis)
		}
	}
	// Numbers first: they can lie along x.
	sort.SliceStable(varying, func(i, j int) bool {
		return numericAxis(runs, varying[i]) && !numericAxis(runs, varying[j])
	})
	switch {
	case len(varying) >= 2:
		return varying[0], varying[1]
	case len(varying) == 1:
		return varying[0], ""
	case len(constant) >= 1:
		return constant[0], ""
	}
	return "", ""
}

func numericAxis(runs []*archive.Run, axis string) bool {
	for _, r := range runs {
		if a, ok := r.Axes[axis]; ok && a.Num == nil {
			return false
		}
	}
	return true
}

// tablePivot tabulates the campaign's first summary value that its runs
// have: goodput, else the request/response latency, else the RTT.
func tablePivot(runs []*archive.Run, rows, cols string) (*archive.Table, string) {
	if rows == "" {
		return nil, ""
	}
	for _, value := range []string{"received_bits_per_second", "rr_p50_us", "mean_rtt_ms"} {
		t, _, err := archive.Pivot(runs, rows, cols, value, archive.StatMean)
		if err == nil && len(t.Cells) > 0 {
			return t, value
		}
	}
	return nil, ""
}

// cpuTables are the pivots of each end's process CPU and peak resident
// memory over the table's axes, where the runs have them: the client's
// (local) and the server's (remote).
func cpuTables(runs []*archive.Run, rows, cols string) []report.Table {
	var out []report.Table
	for _, c := range []struct{ value, end, what string }{
		{archive.FigureCPULocalTotal, "the client's (local)", "process CPU, % of one core"},
		{archive.FigureCPURemoteTotal, "the server's (remote)", "process CPU, % of one core"},
		{archive.FigureRSSLocalPeak, "the client's (local)", "peak resident memory"},
		{archive.FigureRSSRemotePeak, "the server's (remote)", "peak resident memory"},
		{archive.FigureHostCPULocalMean, "the client's (local) host", "CPU busy over the run, % of all its time"},
		{archive.FigureHostCPURemoteMean, "the server's (remote) host", "CPU busy over the run, % of all its time"},
		{archive.FigureHostMemLocalPeak, "the client's (local) host", "peak memory in use"},
		{archive.FigureHostMemRemotePeak, "the server's (remote) host", "peak memory in use"},
	} {
		t, _, err := archive.Pivot(runs, rows, cols, c.value, archive.StatMean)
		if err != nil || len(t.Cells) == 0 {
			continue
		}
		out = append(out, report.Table{
			Caption: fmt.Sprintf("%s: %s %s, mean over repetitions (min–max, n=runs)", c.value, c.end, c.what),
			Grid:    pivotfmt.Grid(t),
		})
	}
	return out
}

// addCampaignFigures writes the sweep (and, over two axes, the heatmap)
// of the pivot into dir, and adds them to s: the sweep as an interactive
// chart with its static figure to download, the heatmap as a figure.
func addCampaignFigures(s *report.Section, t *archive.Table, footer plot.Footer, name, dir string) {
	numericRows := len(t.Rows) > 0
	for _, r := range t.Rows {
		numericRows = numericRows && r.Num != nil
	}
	if numericRows {
		if in, err := plotarchive.SweepOf(t, footer); err == nil {
			c := sweepChart(t, in)
			if fig, err := plot.Sweep(in); err == nil {
				f := saveFigure(fig, dir, name+"-sweep", in.Title, "", true)
				c.Figure = &f
			}
			s.Charts = append(s.Charts, c)
		}
	}
	if t.ColAxis != "" && len(t.Cols) > 1 {
		if in, err := plotarchive.HeatmapOf(t, footer); err == nil {
			if fig, err := plot.Heatmap(in); err == nil {
				s.Figures = append(s.Figures, saveFigure(fig, dir, name+"-heatmap", in.Title, "", true))
			}
		}
	}
}

// saveFigure writes fig into dir as base.svg, and as base.png with png;
// a figure that fails to write is named in the caption rather than
// failing the page.
func saveFigure(fig *plot.Figure, dir, base, alt, caption string, png bool) report.Figure {
	base = safeFileName(base)
	if err := fig.Save(filepath.Join(dir, base+".svg")); err != nil {
		return report.Figure{Alt: alt, Caption: "not drawn: " + err.Error()}
	}
	out := report.Figure{File: base + ".svg", Alt: alt, Caption: caption}
	if png && fig.Save(filepath.Join(dir, base+".png")) == nil {
		out.PNG = base + ".png"
	}
	return out
}

func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// sweepChart is the sweep as an interactive chart, in the unit the
// largest value reads best in.
func sweepChart(t *archive.Table, in plot.SweepInput) report.Chart {
	div, unit := ChartUnit(t)
	c := report.Chart{Title: in.Title, XLabel: in.X.Label, YLabel: fmt.Sprintf("%s (%s)", in.Y.Label, unit)}
	for _, r := range t.Rows {
		c.X = append(c.X, plotarchive.AxisNumber(t.RowAxis, *r.Num))
	}
	// Windows, durations and sizes read on a log axis, as the static
	// sweep draws them; other axes only when they span decades.
	switch t.RowAxis {
	case campaign.AxisWindow, campaign.AxisLength:
		c.XUnit = "bytes"
		c.LogX = true
	case campaign.AxisTime:
		c.XUnit = "seconds"
		c.LogX = true
	default:
		c.LogX = spansDecades(c.X)
	}
	for j := range t.Cols {
		s := report.Series{Name: in.Series[j].Name}
		for i := range t.Rows {
			v := math.NaN()
			if cell, ok := t.Cell(i, j); ok {
				v = cell.Value / div
			}
			s.Y = append(s.Y, v)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// ChartUnit is the divisor and unit name a chart of the table's values
// reads best in: rates in the unit of the largest.
func ChartUnit(t *archive.Table) (float64, string) {
	unit := ""
	for _, c := range archive.SummaryColumns {
		if c.Name == t.Value {
			unit = c.Unit
		}
	}
	if unit != "bits/s" {
		return 1, unit
	}
	top := 0.0
	for _, c := range t.Cells {
		top = math.Max(top, c.Value)
	}
	return rateUnit(top)
}

func rateUnit(top float64) (float64, string) {
	switch {
	case top >= 1e9:
		return 1e9, "Gbits/sec"
	case top >= 1e6:
		return 1e6, "Mbits/sec"
	case top >= 1e3:
		return 1e3, "Kbits/sec"
	}
	return 1, "bits/sec"
}

func spansDecades(xs []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, x := range xs {
		if x > 0 {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	return hi > 0 && hi/lo >= 100
}

// hostsOf lists each host once with its kernel limits, as the first
// run that recorded them saw them.
func hostsOf(runs []*archive.Run) []report.Host {
	var out []report.Host
	seen := map[string]bool{}
	for _, r := range runs {
		for _, l := range r.Limits {
			key := l.Host + "\x00" + l.Hostname
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, report.Host{Role: l.Host, Hostname: l.Hostname, Kernel: l.Kernel, Limits: limitsKV(l.Limits)})
		}
	}
	if len(out) == 0 && len(runs) > 0 {
		// No limits recorded (an imported log): the names and kernels.
		r := runs[0]
		if r.LocalHost != "" {
			out = append(out, report.Host{Role: "local", Hostname: r.LocalHost, Kernel: r.LocalKernel})
		}
		if r.RemoteHost != "" {
			out = append(out, report.Host{Role: "remote", Hostname: r.RemoteHost, Kernel: r.RemoteKernel})
		}
	}
	return out
}

// limitsKV spreads the stored limits' JSON object into rows.
func limitsKV(s string) []report.KV {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		if s == "" {
			return nil
		}
		return []report.KV{{Key: "limits", Value: s}}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []report.KV
	for _, k := range keys {
		v := m[k]
		var text string
		switch v := v.(type) {
		case string:
			text = v
		default:
			b, _ := json.Marshal(v)
			text = string(b)
		}
		out = append(out, report.KV{Key: k, Value: text})
	}
	return out
}

// runDetail is one run's detail section; with figures, its timeline or
// latency figure is written into dir.
func runDetail(r *archive.Run, dir string, figures bool) report.Run {
	out := report.Run{ID: r.ID, State: r.State, Error: archive.RedactSecrets(r.Error), Cmdline: archive.RedactSecrets(r.Cmdline), Started: r.Started}
	axes := make([]string, 0, len(r.Axes))
	for a := range r.Axes {
		axes = append(axes, a)
	}
	sort.Strings(axes)
	for _, a := range axes {
		out.Axes = append(out.Axes, report.KV{Key: a, Value: pivotfmt.AxisText(a, r.Axes[a])})
	}
	vals := r.Summary.Values()
	for _, c := range archive.SummaryColumns {
		if v, ok := vals[c.Name]; ok {
			out.Summary = append(out.Summary, report.KV{Key: c.Name, Value: pivotfmt.ValueText(c.Name, v)})
		}
	}
	out.Verdicts = documentVerdicts(r)
	out.Chart = intervalChart(r)
	out.HostCharts = hostCharts(r)
	if !figures || r.DocumentFormat != archive.FormatJSON {
		return out
	}
	doc, err := resultjson.Read(bytes.NewReader(r.Document))
	if err != nil {
		return out
	}
	subject := "run " + r.ID
	if r.Campaign != "" {
		subject += " of campaign " + r.Campaign
	}
	// Each figure the run's document can give; a load figure only where
	// the rr run had a load phase.
	kinds := map[string][]string{resultjson.KindTest: {"timeline"}, resultjson.KindRR: {"latency", "load"}, resultjson.KindUDPMon: {"udpmon"}, resultjson.KindRRUL: {"rrul"}}[doc.Kind]
	for _, kind := range kinds {
		fig, err := plot.DocumentFigure(kind, doc, subject)
		if err != nil {
			continue
		}
		f := saveFigure(fig, dir, "run-"+r.ID+"-"+kind, kind+" of "+subject, "", false)
		// The timeline draws the goodput the run's chart shows: one
		// figure, the chart, with the timeline to download.
		if kind == "timeline" && out.Chart != nil && out.Chart.Figure == nil {
			out.Chart.Figure = &f
			continue
		}
		out.Figures = append(out.Figures, f)
	}
	return out
}

// intervalChart is a run's goodput per interval (the intervals' sums).
func intervalChart(r *archive.Run) *report.Chart {
	type point struct{ t, bps float64 }
	bySender := map[string][]point{}
	var roles []string
	top := 0.0
	for _, iv := range r.Intervals {
		if iv.Stream != nil || iv.BitsPerSecond == nil || iv.Omitted {
			continue
		}
		if _, ok := bySender[iv.SenderRole]; !ok {
			roles = append(roles, iv.SenderRole)
		}
		bySender[iv.SenderRole] = append(bySender[iv.SenderRole], point{iv.End, *iv.BitsPerSecond})
		top = math.Max(top, *iv.BitsPerSecond)
	}
	if len(roles) == 0 {
		return nil
	}
	div, unit := rateUnit(top)
	xs := map[float64]bool{}
	for _, ps := range bySender {
		for _, p := range ps {
			xs[p.t] = true
		}
	}
	c := &report.Chart{Title: "Goodput per interval, run " + r.ID, XLabel: "Time", XUnit: "seconds", YLabel: "Goodput (" + unit + ")"}
	for x := range xs {
		c.X = append(c.X, x)
	}
	sort.Float64s(c.X)
	for _, role := range roles {
		at := map[float64]float64{}
		for _, p := range bySender[role] {
			at[p.t] = p.bps / div
		}
		s := report.Series{Name: role + " sends"}
		for _, x := range c.X {
			if v, ok := at[x]; ok {
				s.Y = append(s.Y, v)
			} else {
				s.Y = append(s.Y, math.NaN())
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// hostCharts are each end's whole host over the run, from its host
// counters' samples: CPU busy (user, system and softirq) in percent of
// all the host's time, and memory in use; none without samples.
func hostCharts(r *archive.Run) []report.Chart {
	hosts := []string{"local", "remote"}
	names := map[string]string{"local": "local host", "remote": "remote host"}
	if r.LocalHost != "" {
		names["local"] += " (" + r.LocalHost + ")"
	}
	if r.RemoteHost != "" {
		names["remote"] += " (" + r.RemoteHost + ")"
	}
	cpu := map[string]map[float64]float64{}
	mem := map[string]map[float64]float64{}
	xs := map[float64]bool{}
	for _, h := range r.Hosts {
		if h.CPUUser != nil && h.CPUSys != nil {
			busy := *h.CPUUser + *h.CPUSys
			if h.CPUSoftIRQ != nil {
				busy += *h.CPUSoftIRQ
			}
			if cpu[h.Host] == nil {
				cpu[h.Host] = map[float64]float64{}
			}
			cpu[h.Host][h.T] = busy
			xs[h.T] = true
		}
		if h.MemUsed != nil {
			if mem[h.Host] == nil {
				mem[h.Host] = map[float64]float64{}
			}
			mem[h.Host][h.T] = float64(*h.MemUsed)
			xs[h.T] = true
		}
	}
	var x []float64
	for t := range xs {
		x = append(x, t)
	}
	sort.Float64s(x)
	series := func(byHost map[string]map[float64]float64, div float64) []report.Series {
		var out []report.Series
		for _, h := range hosts {
			at, ok := byHost[h]
			if !ok {
				continue
			}
			s := report.Series{Name: names[h]}
			for _, t := range x {
				if v, ok := at[t]; ok {
					s.Y = append(s.Y, v/div)
				} else {
					s.Y = append(s.Y, math.NaN())
				}
			}
			out = append(out, s)
		}
		return out
	}
	var out []report.Chart
	if s := series(cpu, 1); len(s) > 0 && len(x) > 1 {
		out = append(out, report.Chart{Title: "Host CPU busy, run " + r.ID, XLabel: "Time", XUnit: "seconds",
			YLabel: "CPU busy (% of all the host's time)", X: x, Series: s})
	}
	if s := series(mem, 1<<20); len(s) > 0 && len(x) > 1 {
		out = append(out, report.Chart{Title: "Host memory in use, run " + r.ID, XLabel: "Time", XUnit: "seconds",
			YLabel: "Memory in use (MBytes)", X: x, Series: s})
	}
	return out
}

// documentVerdicts are the verdicts a run's document carries: an advise
// report's verdict and advice, or where each direction's lost UDP
// datagrams went.
func documentVerdicts(r *archive.Run) []string {
	if r.IsAdvise() {
		return adviseVerdicts(r)
	}
	if r.DocumentFormat != archive.FormatJSON {
		return nil
	}
	var doc struct {
		Wireperf struct {
			UDPLoss []struct {
				Direction string `json:"direction"`
				Verdict   string `json:"verdict"`
			} `json:"udp_loss"`
		} `json:"wireperf"`
	}
	if json.Unmarshal(r.Document, &doc) != nil {
		return nil
	}
	var out []string
	for _, l := range doc.Wireperf.UDPLoss {
		if l.Verdict != "" {
			out = append(out, fmt.Sprintf("UDP loss %s: %s", l.Direction, l.Verdict))
		}
	}
	return out
}

// adviseVerdicts are a stored advise report's verdict, then its advice,
// one line each.
func adviseVerdicts(r *archive.Run) []string {
	var rep advise.Report
	if err := json.Unmarshal(r.Document, &rep); err != nil {
		return []string{fmt.Sprintf("advise report %s: unreadable: %v", r.ID, err)}
	}
	v := rep.Verdict
	line := fmt.Sprintf("advise %s (%s): %s", rep.Target, rep.Direction, v.Limit)
	if v.Host != "" {
		line += " on the " + v.Host
	}
	if v.Summary != "" {
		line += ": " + v.Summary
	}
	if v.Reached > 0 {
		line += fmt.Sprintf(" (one stream reached %.0f%% of the ideal)", 100*v.Reached)
	}
	out := []string{line}
	for _, step := range rep.Advice.Steps {
		out = append(out, "what to do: "+step)
	}
	return out
}

// sectionVerdicts gathers the verdicts of the advise reports among runs,
// in the runs' order.
func sectionVerdicts(runs []*archive.Run) []string {
	var out []string
	for _, r := range runs {
		if r.IsAdvise() {
			out = append(out, adviseVerdicts(r)...)
		}
	}
	return out
}

// readableSpec is a campaign's stored spec as a reader wants it: a flags
// campaign's arguments (stored as JSON {"args": [...]}) as the command
// line they came from, a file campaign's YAML as it was written. A spec
// in neither form is shown as stored.
func readableSpec(spec, format string) (text, label string) {
	switch format {
	case "yaml":
		return spec, "YAML file"
	case "flags":
		var stored struct {
			Args *[]string `json:"args"`
		}
		if err := json.Unmarshal([]byte(spec), &stored); err != nil || stored.Args == nil {
			return spec, format
		}
		words := []string{"wireperf", "sweep"}
		for _, a := range *stored.Args {
			words = append(words, shellQuote(a))
		}
		return strings.Join(words, " "), "command line"
	}
	return spec, format
}

// shellQuote is a as a POSIX shell reads it back: as it is when it holds
// only characters the shell leaves alone, else in single quotes.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
