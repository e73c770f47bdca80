package reportarchive

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/report"
)

func f64(v float64) *float64 { return &v }

// axes are a run's axes as a campaign stores them: numbers with the
// label given, words as labels.
func axes(kv ...any) map[string]archive.Axis {
	m := map[string]archive.Axis{}
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case float64:
			m[kv[i].(string)] = archive.Axis{Num: f64(v), Label: fmt.Sprint(v)}
		case string:
			m[kv[i].(string)] = archive.Axis{Label: v}
		}
	}
	return m
}

func finished(a map[string]archive.Axis, bps float64) *archive.Run {
	return &archive.Run{State: archive.StateFinished, Axes: a, Summary: archive.Summary{ReceivedBps: f64(bps)}}
}

// The table's axes: those that vary, numbers first (they can lie along
// x), in the order a sweep draws them best; else one that does not vary.
func TestTableAxes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		runs       []*archive.Run
		rows, cols string
	}{
		{"windows × streams, directions", []*archive.Run{
			finished(axes("direction", "up", "parallel", 1.0, "window", 65536.0), 1),
			finished(axes("direction", "down", "parallel", 2.0, "window", 1048576.0), 1),
		}, "window", "parallel"},
		{"congestion controls × streams", []*archive.Run{
			finished(axes("congestion", "cubic", "parallel", 1.0), 1),
			finished(axes("congestion", "bbr", "parallel", 2.0), 1),
		}, "parallel", "congestion"},
		{"durations, one window", []*archive.Run{
			finished(axes("window", 65536.0, "time", 10.0), 1),
			finished(axes("window", 65536.0, "time", 60.0), 1),
		}, "time", ""},
		{"one point", []*archive.Run{finished(axes("parallel", 4.0, "window", 65536.0), 1)}, "window", ""},
		{"no axes", []*archive.Run{finished(nil, 1)}, "", ""},
	} {
		if rows, cols := tableAxes(tc.runs); rows != tc.rows || cols != tc.cols {
			t.Errorf("%s: rows %q, cols %q; want %q, %q", tc.name, rows, cols, tc.rows, tc.cols)
		}
	}
}

// A campaign without goodput tabulates its latency.
func TestTablePivot(t *testing.T) {
	rr := []*archive.Run{
		{State: archive.StateFinished, Axes: axes("length", 64.0), Summary: archive.Summary{RRp50us: f64(30)}},
		{State: archive.StateFinished, Axes: axes("length", 512.0), Summary: archive.Summary{RRp50us: f64(40)}},
	}
	tab, value := tablePivot(rr, "length", "")
	if tab == nil || value != "rr_p50_us" || len(tab.Cells) != 2 {
		t.Errorf("rr campaign: %q, %+v", value, tab)
	}
	if tab, value := tablePivot(rr, "", ""); tab != nil || value != "" {
		t.Errorf("no axis: %q, %+v", value, tab)
	}
}

func TestChartUnit(t *testing.T) {
	pivot := func(runs []*archive.Run, value string) *archive.Table {
		tab, _, err := archive.Pivot(runs, "parallel", "", value, archive.StatMean)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	gbit := pivot([]*archive.Run{finished(axes("parallel", 1.0), 9e8), finished(axes("parallel", 2.0), 2.5e10)}, "received_bits_per_second")
	kbit := pivot([]*archive.Run{finished(axes("parallel", 1.0), 2500)}, "received_bits_per_second")
	rtt := pivot([]*archive.Run{{State: archive.StateFinished, Axes: axes("parallel", 1.0), Summary: archive.Summary{MeanRTTms: f64(2e4)}}}, "mean_rtt_ms")
	for _, tc := range []struct {
		tab  *archive.Table
		div  float64
		unit string
	}{{gbit, 1e9, "Gbits/sec"}, {kbit, 1e3, "Kbits/sec"}, {rtt, 1, "ms"}} {
		if div, unit := ChartUnit(tc.tab); div != tc.div || unit != tc.unit {
			t.Errorf("%s: %g %q, want %g %q", tc.tab.Value, div, unit, tc.div, tc.unit)
		}
	}
}

func TestLimitsKV(t *testing.T) {
	got := limitsKV(`{"rmem_max":4194304,"congestion":"bbr","tcp_rmem":[4096,131072,6291456]}`)
	want := []report.KV{{Key: "congestion", Value: "bbr"}, {Key: "rmem_max", Value: "4194304"}, {Key: "tcp_rmem", Value: "[4096,131072,6291456]"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limits %v, want %v", got, want)
	}
	if got := limitsKV("rmem_max=1"); !reflect.DeepEqual(got, []report.KV{{Key: "limits", Value: "rmem_max=1"}}) {
		t.Errorf("not JSON: %v", got)
	}
	if got := limitsKV(""); got != nil {
		t.Errorf("none: %v", got)
	}
}

// Each host once, with the limits the first run that recorded them saw;
// runs without limits (imported logs) give their host names.
func TestHostsOf(t *testing.T) {
	runs := []*archive.Run{
		{Limits: []archive.HostLimits{{Host: "local", Hostname: "a", Kernel: "6.1", Limits: `{"rmem_max":1}`}}},
		{Limits: []archive.HostLimits{{Host: "local", Hostname: "a", Limits: `{"rmem_max":2}`}, {Host: "remote", Hostname: "b"}}},
	}
	want := []report.Host{
		{Role: "local", Hostname: "a", Kernel: "6.1", Limits: []report.KV{{Key: "rmem_max", Value: "1"}}},
		{Role: "remote", Hostname: "b"},
	}
	if got := hostsOf(runs); !reflect.DeepEqual(got, want) {
		t.Errorf("hosts %+v, want %+v", got, want)
	}
	imported := []*archive.Run{{LocalHost: "x", LocalKernel: "Linux x", RemoteHost: "y"}}
	want = []report.Host{{Role: "local", Hostname: "x", Kernel: "Linux x"}, {Role: "remote", Hostname: "y"}}
	if got := hostsOf(imported); !reflect.DeepEqual(got, want) {
		t.Errorf("imported hosts %+v, want %+v", got, want)
	}
}

// The chart is the intervals' sums per sender, over the union of their
// end times, with gaps where a sender has none; omitted and per-stream
// intervals are left out.
func TestIntervalChart(t *testing.T) {
	stream := 1
	sum := func(role string, end, bps float64) archive.Interval {
		return archive.Interval{SenderRole: role, Start: end - 1, End: end, BitsPerSecond: f64(bps)}
	}
	omitted := sum("client", 0.5, 1e12)
	omitted.Omitted = true
	perStream := sum("client", 1, 1e12)
	perStream.Stream = &stream
	r := &archive.Run{ID: "r1", Intervals: []archive.Interval{
		omitted, perStream, sum("client", 1, 2e9), sum("client", 2, 3e9), sum("server", 2, 1e9), sum("server", 3, 5e8),
	}}
	c := intervalChart(r)
	if c == nil || c.Title != "Goodput per interval, run r1" || c.YLabel != "Goodput (Gbits/sec)" || c.XUnit != "seconds" ||
		fmt.Sprint(c.X) != "[1 2 3]" || len(c.Series) != 2 {
		t.Fatalf("chart %+v", c)
	}
	if s := c.Series[0]; s.Name != "client sends" || fmt.Sprint(s.Y) != "[2 3 NaN]" {
		t.Errorf("client %+v", s)
	}
	if s := c.Series[1]; s.Name != "server sends" || fmt.Sprint(s.Y) != "[NaN 1 0.5]" {
		t.Errorf("server %+v", s)
	}
	if c := intervalChart(&archive.Run{ID: "none"}); c != nil {
		t.Errorf("a run without intervals: %+v", c)
	}
}

// A run's hosts over time: CPU busy (user + system + softirq) and memory
// in use, one series per end that sampled, NaN where an end has no sample.
func TestHostCharts(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	sample := func(host string, at, user, sys, irq float64, mem int64) archive.HostSample {
		h := archive.HostSample{Host: host, T: at, CPUUser: f64(user), CPUSys: f64(sys), CPUSoftIRQ: f64(irq)}
		if mem > 0 {
			h.MemUsed = i64(mem)
		}
		return h
	}
	r := &archive.Run{ID: "r1", LocalHost: "a", RemoteHost: "b", Hosts: []archive.HostSample{
		sample("local", 1, 10, 20, 5, 2<<20), sample("local", 2, 1, 2, 0, 3<<20),
		sample("remote", 1, 4, 4, 2, 0), sample("remote", 3, 40, 50, 10, 0),
	}}
	charts := hostCharts(r)
	if len(charts) != 2 {
		t.Fatalf("%d charts, want CPU and memory: %+v", len(charts), charts)
	}
	cpu, mem := charts[0], charts[1]
	if cpu.Title != "Host CPU busy, run r1" || fmt.Sprint(cpu.X) != "[1 2 3]" || len(cpu.Series) != 2 {
		t.Fatalf("CPU chart %+v", cpu)
	}
	if s := cpu.Series[0]; s.Name != "local host (a)" || fmt.Sprint(s.Y) != "[35 3 NaN]" {
		t.Errorf("local CPU %+v", s)
	}
	if s := cpu.Series[1]; s.Name != "remote host (b)" || fmt.Sprint(s.Y) != "[10 NaN 100]" {
		t.Errorf("remote CPU %+v", s)
	}
	if len(mem.Series) != 1 || mem.YLabel != "Memory in use (MBytes)" || fmt.Sprint(mem.Series[0].Y) != "[2 3 NaN]" {
		t.Errorf("memory chart %+v", mem)
	}
	if c := hostCharts(&archive.Run{ID: "none"}); c != nil {
		t.Errorf("a run without host samples: %+v", c)
	}
	if d := runDetail(r, t.TempDir(), false); len(d.HostCharts) != 2 {
		t.Errorf("the run's detail has %d host charts, want 2", len(d.HostCharts))
	}
}

func adviseRun(t *testing.T, id string) *archive.Run {
	t.Helper()
	rep := advise.Report{Target: "b:5201", Direction: "up",
		Verdict: advise.Verdict{Limit: "receive window", Host: "receiver", Summary: "rmem_max caps the window", Reached: 0.25},
		Advice:  advise.Advice{Steps: []string{"raise rmem_max", "run again"}}}
	doc, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return &archive.Run{ID: id, State: archive.StateFinished, Document: doc, DocumentFormat: archive.FormatAdviseJSON}
}

func TestVerdicts(t *testing.T) {
	adv := adviseRun(t, "a1")
	want := []string{
		"advise b:5201 (up): receive window on the receiver: rmem_max caps the window (one stream reached 25% of the ideal)",
		"what to do: raise rmem_max",
		"what to do: run again",
	}
	if got := documentVerdicts(adv); !reflect.DeepEqual(got, want) {
		t.Errorf("advise verdicts %q", got)
	}
	udp := &archive.Run{DocumentFormat: archive.FormatJSON, Document: []byte(`{"wireperf":{"udp_loss":[
		{"direction":"client to server","verdict":"the receiver's socket buffer overflowed"},{"direction":"server to client"}]}}`)}
	if got := documentVerdicts(udp); !reflect.DeepEqual(got, []string{"UDP loss client to server: the receiver's socket buffer overflowed"}) {
		t.Errorf("UDP loss verdicts %q", got)
	}
	if got := documentVerdicts(&archive.Run{DocumentFormat: archive.FormatText, Document: []byte("[ ID] ...")}); got != nil {
		t.Errorf("a text log's verdicts %q", got)
	}
	broken := &archive.Run{ID: "bad", DocumentFormat: archive.FormatAdviseJSON, Document: []byte("{")}
	if got := documentVerdicts(broken); len(got) != 1 || !strings.HasPrefix(got[0], "advise report bad: unreadable: ") {
		t.Errorf("an unreadable advise report: %q", got)
	}
	// A section gathers its advise reports' verdicts only.
	if got := sectionVerdicts([]*archive.Run{udp, adv}); !reflect.DeepEqual(got, want) {
		t.Errorf("section verdicts %q", got)
	}
}

func TestSafeFileName(t *testing.T) {
	if got := safeFileName("run-a/b c:Ω_1.svg"); got != "run-a_b_c___1.svg" {
		t.Errorf("safeFileName: %q", got)
	}
}

// openStore is an empty SQLite archive.
func openStore(t *testing.T) *archive.Store {
	t.Helper()
	store, err := archive.Open(context.Background(), archivetest.Backends(t)["sqlite"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// putGrid stores campaign "grid" with the given flags spec and 8 finished
// runs: window 64K and 4M × parallel 1 and 2, two repetitions each.
func putGrid(t *testing.T, store *archive.Store, spec string, created time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "grid", Spec: spec, SpecFormat: "flags", Created: created}); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for _, w := range []float64{65536, 4 << 20} {
		for _, p := range []float64{1, 2} {
			for rep := range 2 {
				seq++
				r := finished(axes("window", w, "parallel", p), w*p*1e3*float64(rep+1))
				r.ID, r.Campaign, r.Seq, r.Rep, r.Source = fmt.Sprintf("r%02d", 20-seq), "grid", seq, rep, archive.SourceNative
				r.Started = created.Add(time.Duration(seq) * time.Minute)
				r.LocalHost, r.RemoteHost = "a", "b"
				r.Limits = []archive.HostLimits{{Host: "local", Hostname: "a", Limits: `{"rmem_max":4194304}`}}
				r.Intervals = []archive.Interval{{SenderRole: "client", End: 1, BitsPerSecond: r.Summary.ReceivedBps}}
				r.Summary.Figures = map[string]float64{archive.FigureCPULocalTotal: 10 * p * float64(rep+1), archive.FigureCPURemoteTotal: 20 * p,
					archive.FigureRSSLocalPeak: 30e6 * p, archive.FigureRSSRemotePeak: 50e6 * p}
				if err := store.PutRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// A campaign's section: the pivot's grid as `wireperf table` prints it,
// the sweep and heatmap written beside the page, the sweep's chart in the
// table's numbers, and the runs in the campaign's order.
func TestCampaign(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	created := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	putGrid(t, store, "--window 64K,4M -P 1,2", created)
	dir := t.TempDir()
	s, err := Campaign(ctx, store, "grid", dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "campaign grid" || s.Spec != "--window 64K,4M -P 1,2" || s.SpecFormat != "flags" || !s.Created.Equal(created) || s.Empty != "" {
		t.Errorf("section %+v", s)
	}
	runs, err := store.List(ctx, archive.Filter{Campaign: "grid"})
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := archive.Pivot(runs, "window", "parallel", "received_bits_per_second", archive.StatMean)
	if err != nil {
		t.Fatal(err)
	}
	if s.Table == nil || s.Table.Caption != "received_bits_per_second, mean over repetitions (min–max, n=runs)" ||
		!reflect.DeepEqual(s.Table.Grid, pivotfmt.Grid(tab)) {
		t.Errorf("table %+v\nwant the grid %q", s.Table, pivotfmt.Grid(tab))
	}
	// Each end's CPU and peak memory over the same axes.
	if len(s.CPU) != 4 {
		t.Fatalf("%d CPU and memory tables, want the client's and the server's of each", len(s.CPU))
	}
	for i, value := range []string{archive.FigureCPULocalTotal, archive.FigureCPURemoteTotal, archive.FigureRSSLocalPeak, archive.FigureRSSRemotePeak} {
		cpu, _, err := archive.Pivot(runs, "window", "parallel", value, archive.StatMean)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s.CPU[i].Caption, value+": ") || !reflect.DeepEqual(s.CPU[i].Grid, pivotfmt.Grid(cpu)) {
			t.Errorf("CPU table %d %+v\nwant the grid %q", i, s.CPU[i], pivotfmt.Grid(cpu))
		}
	}
	// The heatmap is a figure; the sweep is a chart with its figure, both
	// written as SVG and PNG.
	var files []string
	for _, f := range s.Figures {
		files = append(files, f.File, f.PNG)
	}
	if len(s.Charts) != 1 {
		t.Fatalf("%d charts, want the sweep's", len(s.Charts))
	}
	c := s.Charts[0]
	if c.Figure == nil {
		t.Fatal("the sweep chart has no figure to download")
	}
	files = append(files, c.Figure.File, c.Figure.PNG)
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	if fmt.Sprint(files) != "[grid-heatmap.svg grid-heatmap.png grid-sweep.svg grid-sweep.png]" {
		t.Errorf("figures %v", files)
	}
	div, unit := ChartUnit(tab)
	if !c.LogX || c.XUnit != "bytes" || fmt.Sprint(c.X) != "[65536 4.194304e+06]" || c.YLabel != "Goodput ("+unit+")" || len(c.Series) != 2 {
		t.Errorf("chart %+v", c)
	}
	for _, cell := range tab.Cells {
		if got := c.Series[cell.Col].Y[cell.Row] * div; math.Abs(got-cell.Value) > 1e-9*cell.Value {
			t.Errorf("chart at %d,%d: %g, the pivot's %g", cell.Row, cell.Col, got, cell.Value)
		}
	}
	if len(s.Runs) != 8 || s.Runs[0].ID != "r19" || s.Runs[7].ID != "r12" || s.Runs[0].Chart == nil {
		t.Fatalf("runs %+v: want all 8 in the campaign's order, each with its chart", s.Runs)
	}
	if want := []report.KV{{Key: "parallel", Value: "1"}, {Key: "window", Value: "64K"}}; !reflect.DeepEqual(s.Runs[0].Axes, want) {
		t.Errorf("first run's axes %v, want %v", s.Runs[0].Axes, want)
	}
	if len(s.Hosts) != 1 || s.Hosts[0].Hostname != "a" {
		t.Errorf("hosts %+v", s.Hosts)
	}
}

// A campaign without runs, or without finished ones, says so.
func TestCampaignEmpty(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	for _, name := range []string{"planned", "failed"} {
		if _, err := store.PutCampaign(ctx, archive.Campaign{Name: name, Spec: "-P 1", SpecFormat: "flags", Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	r := &archive.Run{ID: "f1", Campaign: "failed", State: archive.StateFailed, Error: "connection refused", Source: archive.SourceNative, Axes: axes("parallel", 1.0)}
	if err := store.PutRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	s, err := Campaign(ctx, store, "planned", t.TempDir())
	if err != nil || s.Empty != "This campaign has no runs yet: nothing to show." || s.Table != nil {
		t.Errorf("no runs: %v, %+v", err, s)
	}
	s, err = Campaign(ctx, store, "failed", t.TempDir())
	if err != nil || s.Empty != "This campaign has no finished runs with a summary value to tabulate." || len(s.Runs) != 1 || s.Runs[0].Error != "connection refused" {
		t.Errorf("only a failed run: %v, %+v", err, s)
	}
	if _, err := Campaign(ctx, store, "nosuch", t.TempDir()); err == nil {
		t.Error("an unknown campaign gave a section")
	}
}

func TestRun(t *testing.T) {
	r := adviseRun(t, "a1")
	r.Campaign = "lab"
	s := Run(r, t.TempDir())
	if s.Name != "run a1 of campaign lab" || len(s.Runs) != 1 || s.Runs[0].ID != "a1" || len(s.Verdicts) != 3 || !reflect.DeepEqual(s.Verdicts, s.Runs[0].Verdicts) {
		t.Errorf("section %+v", s)
	}
	if s := Run(&archive.Run{ID: "solo"}, t.TempDir()); s.Name != "run solo" {
		t.Errorf("a run outside a campaign: %q", s.Name)
	}
}

// The campaigns with runs since the time, each once, sorted.
func TestCampaignsSince(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	now := time.Now()
	for i, tc := range []struct {
		campaign string
		ago      time.Duration
	}{{"zeta", time.Hour}, {"alpha", 2 * time.Hour}, {"zeta", 3 * time.Hour}, {"", time.Hour}, {"old", 48 * time.Hour}} {
		r := &archive.Run{ID: fmt.Sprintf("r%d", i), Campaign: tc.campaign, State: archive.StateFinished, Source: archive.SourceNative, Started: now.Add(-tc.ago)}
		if err := store.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	names, err := CampaignsSince(ctx, store, now.Add(-24*time.Hour))
	if err != nil || fmt.Sprint(names) != "[alpha zeta]" {
		t.Errorf("campaigns of the last day: %v, %v", names, err)
	}
	names, err = CampaignsSince(ctx, store, now.Add(time.Hour))
	if err != nil || names != nil {
		t.Errorf("campaigns of the future: %v, %v", names, err)
	}
}

func TestReadableSpec(t *testing.T) {
	for _, c := range []struct{ spec, format, text, label string }{
		{`{"args":["--window=64K,1M","it's","a;b","h"]}`, "flags", `wireperf sweep --window=64K,1M 'it'\''s' 'a;b' h`, "command line"},
		{`{"args":[]}`, "flags", "wireperf sweep", "command line"},
		{"name: x\nwindow: [64K, 1M]\n", "yaml", "name: x\nwindow: [64K, 1M]\n", "YAML file"},
		// Not the stored form: shown as it is.
		{"--window 64K", "flags", "--window 64K", "flags"},
		{`{"other":1}`, "flags", `{"other":1}`, "flags"},
	} {
		text, label := readableSpec(c.spec, c.format)
		if text != c.text || label != c.label {
			t.Errorf("readableSpec(%q, %q) = %q, %q; want %q, %q", c.spec, c.format, text, label, c.text, c.label)
		}
	}
}
