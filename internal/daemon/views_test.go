package daemon_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
	"github.com/wireperf/wireperf/internal/testutil/chromium"
	"github.com/wireperf/wireperf/internal/testutil/promtest"
)

// get fetches path from d's API and returns its body.
func get(t *testing.T, d *daemon.Daemon, path string) []byte {
	t.Helper()
	return promtest.Get(t, d.Mux(), path)
}

// checkMetrics scrapes d's /metrics, parses it with Prometheus's own text
// parser, and checks each pair's last goodput against the archive's, the
// finished runs' count and the schedule lag's observations.
func checkMetrics(t *testing.T, d *daemon.Daemon, last []taskstore.PairStatus, finished int) {
	t.Helper()
	fams := promtest.Scrape(t, d.Mux())
	label := promtest.Label
	goodput := fams["wireperf_mesh_goodput_bytes_per_second"]
	if goodput == nil {
		t.Fatal("no wireperf_mesh_goodput_bytes_per_second")
	}
	for _, p := range last {
		found := false
		for _, m := range goodput.GetMetric() {
			if label(m, "src") == p.Source && label(m, "dst") == p.Dest && label(m, "test") == p.Test {
				found = true
				if got := 8 * m.GetGauge().GetValue(); math.Abs(got-*p.GoodputBps) > 1e-6*(*p.GoodputBps) {
					t.Errorf("%s→%s %s: goodput %v on /metrics, %v in the archive", p.Source, p.Dest, p.Test, got, *p.GoodputBps)
				}
			}
		}
		if !found {
			t.Errorf("%s→%s %s: no goodput on /metrics", p.Source, p.Dest, p.Test)
		}
	}
	var done float64
	for _, m := range fams["wireperf_mesh_runs"].GetMetric() {
		if label(m, "state") == archive.StateFinished {
			done = m.GetGauge().GetValue()
		}
	}
	if int(done) != finished {
		t.Errorf("wireperf_mesh_runs{state=\"finished\"} %v, want %d", done, finished)
	}
	// The daemon's own count of the runs it ended agrees with the archive.
	var counted float64
	for _, m := range fams["wireperf_mesh_runs_total"].GetMetric() {
		if label(m, "outcome") == archive.StateFinished {
			counted += m.GetCounter().GetValue()
		}
	}
	if int(counted) != finished {
		t.Errorf("wireperf_mesh_runs_total{outcome=\"finished\"} %v, want %d", counted, finished)
	}
	lag := fams["wireperf_mesh_schedule_lag_seconds"]
	if lag == nil || len(lag.GetMetric()) != 1 || lag.GetMetric()[0].GetHistogram().GetSampleCount() < 1 {
		t.Errorf("the schedule lag histogram has no observation: %v", lag)
	}
}

// checkGrid fetches d's /grid and checks that each pair of last has its
// half-cell, coloured green (no thresholds are set, and each run finished).
func checkGrid(t *testing.T, d *daemon.Daemon, last []taskstore.PairStatus) {
	t.Helper()
	page := string(get(t, d, "/grid"))
	for _, p := range last {
		cell := `<td data-src="` + p.Source + `" data-dst="` + p.Dest + `">`
		i := strings.Index(page, cell)
		if i < 0 {
			t.Errorf("no cell %s→%s on /grid", p.Source, p.Dest)
			continue
		}
		end := strings.Index(page[i:], "</td>")
		if half := page[i : i+end]; !strings.Contains(half, `data-dir="forward" data-colour="green"`) {
			t.Errorf("cell %s→%s: %s", p.Source, p.Dest, half)
		}
	}
}

// checkGridInChromium sets an amber goodput threshold above anything a
// loopback test reaches on every task, then opens d's /grid in headless
// chromium: each finished pair's forward half-cell must be drawn in the
// legend's amber, with its hover text, and the page must log no error
// and request nothing beyond itself.
func checkGridInChromium(t *testing.T, d *daemon.Daemon, last []taskstore.PairStatus) {
	t.Helper()
	ctx := context.Background()
	tasks, err := d.Schedule().Tasks(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		tk.Thresholds.GoodputAmberBps = 1e15
		// These tasks repeat every 5 s: by the time the browser is up, a
		// cell could be grey for want of a recent result, which is not
		// what is under test here.
		tk.Thresholds.StaleIntervals = 1000
		if _, err := d.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(d.Mux())
	t.Cleanup(srv.Close)
	b := chromium.Start(t, 1000, 700, 60*time.Second, func(u string) bool {
		return u == srv.URL+"/grid" || strings.HasPrefix(u, "data:")
	})
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(srv.URL+"/grid"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	type half struct{ Src, Dst, Dir, Background, Amber, Title string }
	halves, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]half](`Array.from(document.querySelectorAll("button.half")).map(function (h) {
		var td = h.closest("td");
		return { src: td.getAttribute("data-src"), dst: td.getAttribute("data-dst"), dir: h.getAttribute("data-dir"),
			background: getComputedStyle(h).backgroundColor, title: h.title,
			amber: getComputedStyle(document.querySelector(".legend .amber")).backgroundColor };
	})`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range last {
		found := false
		for _, h := range halves {
			if h.Src != p.Source || h.Dst != p.Dest || h.Dir != "forward" {
				continue
			}
			found = true
			if h.Background != h.Amber || !strings.Contains(h.Title, "amber") {
				t.Errorf("%s→%s drawn %s (amber is %s), hover %q", p.Source, p.Dest, h.Background, h.Amber, h.Title)
			}
		}
		if !found {
			t.Errorf("%s→%s: no half-cell in chromium", p.Source, p.Dest)
		}
	}
	b.Check(t)
}

// A daemon's /metrics has the pairs whose source it is, and none of the
// rest of the mesh; beside them its pairs by colour and its worst pair.
func TestMetricsAreThisHostsPairs(t *testing.T) {
	d := idleDaemon(t, "a")
	ctx := context.Background()
	st, sched := d.Store(), d.Schedule()
	now := time.Now()
	tasks := []*schedule.Task{
		loopTask("tput", "a", "b", 5201, 1, 0, time.Minute, 1),
		loopTask("tput", "a", "c", 5201, 1, 0, time.Minute, 1), // never runs: unmeasured
		loopTask("tput", "b", "a", 5201, 1, 0, time.Minute, 1), // another host's
	}
	for _, tk := range tasks {
		if _, err := sched.PutTask(ctx, tk, now); err != nil {
			t.Fatal(err)
		}
	}
	for _, tk := range []*schedule.Task{tasks[0], tasks[2]} {
		r, _ := tk.At(0)
		sr := taskstore.NewSchedRun(tk, r)
		if _, err := sched.PlanRuns(ctx, []*taskstore.SchedRun{sr}, now); err != nil {
			t.Fatal(err)
		}
		if ok, err := sched.Transition(ctx, sr.ID, []string{archive.StateScheduled}, archive.StateFinished, "", now, now.Add(time.Second), now); !ok || err != nil {
			t.Fatalf("transition: %v %v", ok, err)
		}
		bps, rtt := 9.4e8, 0.25
		if err := st.PutRun(ctx, &archive.Run{ID: sr.ID, Source: "daemon", State: archive.StateFinished, Started: now, Ended: now.Add(time.Second),
			Recorded: now, Axes: map[string]archive.Axis{}, Summary: archive.Summary{ReceivedBps: &bps, MeanRTTms: &rtt}}); err != nil {
			t.Fatal(err)
		}
	}
	fams := promtest.Scrape(t, d.Mux())
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			if src := promtest.Label(m, "src"); src != "" && src != "a" {
				t.Errorf("%s has another source's pair: %v", name, m)
			}
			if h := promtest.Label(m, "host"); h != "" && h != "a" {
				t.Errorf("%s has another host: %v", name, m)
			}
		}
	}
	if n := len(fams["wireperf_mesh_goodput_bytes_per_second"].GetMetric()); n != 1 {
		t.Errorf("%d goodput series, want a→b's only", n)
	}
	// A TCP test's RTT is its mean, not a p50 equal to a p99.
	if n := len(fams["wireperf_mesh_rtt_mean_seconds"].GetMetric()); n != 1 || fams["wireperf_mesh_rtt_mean_seconds"].GetMetric()[0].GetGauge().GetValue() != 0.00025 {
		t.Errorf("mean RTT %v, want a→b's 0.25 ms", fams["wireperf_mesh_rtt_mean_seconds"])
	}
	if fams["wireperf_mesh_rtt_p50_seconds"] != nil || fams["wireperf_mesh_rtt_p99_seconds"] != nil {
		t.Error("a TCP test exports RTT percentiles")
	}
	colours := map[string]float64{}
	for _, m := range fams["wireperf_mesh_pairs"].GetMetric() {
		colours[promtest.Label(m, "colour")] = m.GetGauge().GetValue()
	}
	if colours["green"] != 1 || colours["unmeasured"] != 1 || colours["grey"] != 0 || len(colours) != 5 {
		t.Errorf("pairs by colour %v, want a→b green and a→c unmeasured", colours)
	}
	worst := fams["wireperf_mesh_worst_pair_info"].GetMetric()
	if len(worst) != 1 || promtest.Label(worst[0], "dst") != "c" || promtest.Label(worst[0], "colour") != "unmeasured" {
		t.Errorf("worst pair %v, want a→c unmeasured", worst)
	}
	// The run counts are this daemon's runs: a→b's, not b→a's.
	runs := map[string]float64{}
	for _, m := range fams["wireperf_mesh_runs"].GetMetric() {
		runs[promtest.Label(m, "state")] = m.GetGauge().GetValue()
	}
	if runs[archive.StateFinished] != 1 || runs[archive.StateScheduled] != 0 {
		t.Errorf("runs by state %v, want a's one finished run", runs)
	}
}

// finishRun plans tk's first run not yet planned and records it as
// state, with goodput bps when it finished.
func finishRun(t *testing.T, st *archive.Store, tk *schedule.Task, seq int, state string, bps float64, now time.Time) {
	t.Helper()
	ctx := context.Background()
	r, _ := tk.At(seq)
	sr := taskstore.NewSchedRun(tk, r)
	if _, err := taskstore.New(st).PlanRuns(ctx, []*taskstore.SchedRun{sr}, now); err != nil {
		t.Fatal(err)
	}
	if ok, err := taskstore.New(st).Transition(ctx, sr.ID, []string{archive.StateScheduled}, state, "test", now, now.Add(time.Second), now); !ok || err != nil {
		t.Fatalf("transition: %v %v", ok, err)
	}
	if state != archive.StateFinished {
		return
	}
	if err := st.PutRun(ctx, &archive.Run{ID: sr.ID, Source: "daemon", State: state, Started: now, Ended: now.Add(time.Second),
		Recorded: now, Axes: map[string]archive.Axis{}, Summary: archive.Summary{ReceivedBps: &bps}}); err != nil {
		t.Fatal(err)
	}
}

// A grid of 60 hosts in two groups is drawn as group summaries with no
// history; a block holds its own pairs' cells and histories and none of
// the other group's; a run that ends after the daemon's first look is in
// the next request (the daemon's copy of the last results is brought up
// to date from the archive).
func TestGridSummaryAndBlockFromTheLastResults(t *testing.T) {
	d := idleDaemon(t, "h00")
	ctx := context.Background()
	st, sched := d.Store(), d.Schedule()
	now := time.Now()
	name := func(i int) string { return fmt.Sprintf("h%02d", i) }
	var tasks []*schedule.Task
	for i := range 60 {
		group, first := "east", 0
		if i >= 30 {
			group, first = "west", 30
		}
		tk := loopTask("tput", name(i), name(first+(i-first+1)%30), 5201, 1, time.Minute, time.Minute, 0)
		tk.Group = group
		tasks = append(tasks, tk)
	}
	if _, err := sched.ApplyTasks(ctx, "test", tasks, now); err != nil {
		t.Fatal(err)
	}
	finishRun(t, st, tasks[0], 0, archive.StateFinished, 9.4e8, now)  // h00 → h01
	finishRun(t, st, tasks[30], 0, archive.StateFinished, 9.4e8, now) // h30 → h31

	page := string(get(t, d, "/grid"))
	if !strings.Contains(page, "60 hosts in 2 groups") || strings.Contains(page, "data-src=") || !strings.Contains(page, "var histories = [];") {
		t.Errorf("/grid is not a summary without histories:\n%.2000s", page)
	}
	block := func() string { return string(get(t, d, "/grid/block?test=0&from=east&to=east")) }
	b := block()
	cell := func(page, src, dst string) string {
		i := strings.Index(page, `<td data-src="`+src+`" data-dst="`+dst+`">`)
		if i < 0 {
			return ""
		}
		return page[i : i+strings.Index(page[i:], "</td>")]
	}
	if c := cell(b, "h00", "h01"); !strings.Contains(c, `data-colour="green"`) {
		t.Errorf("h00 → h01 in its block: %q, want green", c)
	}
	if !strings.Contains(b, "h00 ⇄ h01, tput") || strings.Contains(b, "h30") || strings.Contains(b, "h31") {
		t.Errorf("the east block lacks h00 ⇄ h01's history or shows the west's hosts:\n%s", b)
	}

	finishRun(t, st, tasks[0], 1, archive.StateFailed, 0, now.Add(time.Minute))
	if c := cell(block(), "h00", "h01"); !strings.Contains(c, `data-colour="red"`) {
		t.Errorf("h00 → h01 after a failed run: %q, want red", c)
	}
	rec := httptest.NewRecorder()
	d.Mux().ServeHTTP(rec, httptest.NewRequest("GET", "/grid/block?test=0&from=east&to=north", nil))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `group "north": not a group of the grid`) {
		t.Errorf("a block of an unknown group: %d %q", rec.Code, rec.Body.String())
	}
}

// Hosts go to the smallest mesh group their tasks come from, so that a
// region is not swallowed by a full mesh over every host.
func TestHostGroups(t *testing.T) {
	task := func(group, src, dst string) *schedule.Task {
		return &schedule.Task{Name: "t", Source: src, Dest: dst, Group: group}
	}
	got := daemon.HostGroups([]string{"ams", "fra", "lon", "nyc", "solo"}, []*schedule.Task{
		task("all", "ams", "nyc"), task("all", "fra", "lon"), task("all", "lon", "nyc"),
		task("europe", "ams", "fra"), task("europe", "fra", "lon"),
		task("", "solo", "ams"), // added by hand
	})
	want := "[{(no group) [solo]} {all [nyc]} {europe [ams fra lon]}]"
	if fmt.Sprint(got) != want {
		t.Errorf("groups %v, want %s", got, want)
	}
}

// meshBytes is the size of a scrape's wireperf_mesh_ lines: the rest
// (the Go runtime's, the process's) changes from one scrape to the next.
func meshBytes(body []byte) int {
	n := 0
	for _, l := range strings.SplitAfter(string(body), "\n") {
		if strings.HasPrefix(l, "wireperf_mesh_") || strings.HasPrefix(l, "# HELP wireperf_mesh_") || strings.HasPrefix(l, "# TYPE wireperf_mesh_") {
			n += len(l)
		}
	}
	return n
}

// A daemon's scrape does not grow with the archive: pairs and runs that
// do not start at its host add nothing to it, however many there are.
func TestMetricsScrapeIsIndependentOfTheArchive(t *testing.T) {
	d := idleDaemon(t, "a")
	ctx := context.Background()
	st, sched := d.Store(), d.Schedule()
	now := time.Now()
	own := []*schedule.Task{loopTask("tput", "a", "b", 5201, 1, time.Minute, time.Minute, 0), loopTask("tput", "a", "c", 5201, 1, time.Minute, time.Minute, 0)}
	for _, tk := range own {
		if _, err := sched.PutTask(ctx, tk, now); err != nil {
			t.Fatal(err)
		}
		finishRun(t, st, tk, 0, archive.StateFinished, 9.4e8, now)
	}
	before := get(t, d, "/metrics")
	if !strings.Contains(string(before), `dst="c"`) {
		t.Fatalf("the scrape lacks a's pairs:\n%s", before)
	}
	// 20 other hosts, each testing the next, 5 runs each.
	for i := range 20 {
		src, dst := fmt.Sprintf("other-%02d", i), fmt.Sprintf("other-%02d", (i+1)%20)
		tk := loopTask("tput", src, dst, 5201, 1, time.Minute, time.Minute, 0)
		if _, err := sched.PutTask(ctx, tk, now); err != nil {
			t.Fatal(err)
		}
		for seq := range 5 {
			finishRun(t, st, tk, seq, archive.StateFinished, 9.4e8, now)
		}
	}
	after := get(t, d, "/metrics")
	if b, a := meshBytes(before), meshBytes(after); a != b || strings.Contains(string(after), "other-") {
		t.Errorf("the scrape's wireperf_mesh_ lines grew from %d to %d bytes with 100 runs of other hosts", b, a)
	}
}

// idleDaemon is a daemon for host on a new SQLite archive that is never
// run: its views read what a test stores.
func idleDaemon(t *testing.T, host string) *daemon.Daemon {
	t.Helper()
	d := newDaemon(t, host, archivetest.Backends(t)["sqlite"], false, nil)
	t.Cleanup(func() { d.CloseQueue(); d.Store().Close() })
	return d
}
