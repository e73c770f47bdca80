package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/report/reportarchive"
	"github.com/wireperf/wireperf/internal/testutil/chromium"
)

// reportCampaign is a fresh SQLite archive, in t's temporary directory,
// holding a small windows × streams campaign run on loopback. The two
// report tests read the same 12 runs: the campaign runs once (a 12-run
// sweep, seconds under the race detector) and each test gets a copy of
// its archive, which it may change.
func reportCampaign(t *testing.T) string {
	t.Helper()
	reportFixture.once.Do(func() { reportFixture.db, reportFixture.err = runReportCampaign(t) })
	if reportFixture.err != nil {
		t.Fatal(reportFixture.err)
	}
	return copyArchive(t, reportFixture.db)
}

var reportFixture struct {
	once sync.Once
	db   string
	err  error
}

// runReportCampaign runs the campaign into an archive that outlives the
// test that first asks for it (TestMain removes it).
func runReportCampaign(t *testing.T) (string, error) {
	dir, err := fixtureDir("report")
	if err != nil {
		return "", err
	}
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(dir, "wireperf.db")
	code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "--window", "64K,256K,4M", "-P", "1,2", "-t", "0.2",
		"--repeat", "2", "--name", "grid", "--db", db, "--", "-i", "0.1")
	if code != ExitOK {
		return "", fmt.Errorf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	return db, nil
}

// campaignTable is the archive's pivot of the campaign as the report
// lays it out, printed as `wireperf table` prints it.
func campaignTable(t *testing.T, db, name string) *archive.Table {
	t.Helper()
	ctx := context.Background()
	store, err := archive.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.List(ctx, archive.Filter{Campaign: name})
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := archive.Pivot(runs, "window", "parallel", "received_bits_per_second", archive.StatMean)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

var remoteRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:|//)`)

func TestReportPageAndBadInput(t *testing.T) {
	db := reportCampaign(t)
	dir := filepath.Join(t.TempDir(), "report")
	if code, _, stderr := runCLI("report", "--db", db, "--campaign", "grid", "-o", dir); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if m := remoteRef.FindString(html); m != "" {
		t.Errorf("the page refers to another host: %q", m)
	}
	// Every file the page uses sits in its directory.
	for _, m := range regexp.MustCompile(`src="([^"]+)"`).FindAllStringSubmatch(html, -1) {
		if strings.Contains(m[1], "/") {
			t.Errorf("src %q is outside the report's directory", m[1])
		}
		if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
			t.Errorf("src %q: %v", m[1], err)
		}
	}
	for _, want := range []string{"campaign grid", "window \\ parallel", "grid-sweep.svg", "grid-heatmap.svg", "timeline.svg", "rmem_max"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, row := range pivotfmt.Grid(campaignTable(t, db, "grid"))[1:] {
		for _, cell := range row {
			if !strings.Contains(html, ">"+cell+"<") {
				t.Errorf("the page lacks the table's cell %q", cell)
			}
		}
	}

	code, _, stderr := runCLI("report", "--db", db, "--campaign", "nosuch", "-o", dir)
	if code != ExitUsage || !strings.Contains(stderr, "nosuch") || !strings.Contains(stderr, "grid") {
		t.Errorf("unknown campaign: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCLI("report", "--db", db, "--run", "nosuchrun", "-o", dir)
	if code != ExitUsage || !strings.Contains(stderr, "nosuchrun") || !strings.Contains(stderr, "runs: ") {
		t.Errorf("unknown run: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("report", "--db", db, "-o", dir); code != ExitUsage || strings.Count(stderr, "\n") != 1 {
		t.Errorf("no selection: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("report", "--db", db, "--campaign", "grid"); code != ExitUsage || !strings.Contains(stderr, "-o DIR") {
		t.Errorf("no -o: exit %d, %q", code, stderr)
	}

	// One run, and a day's campaigns.
	runs := listRuns(t, "--db", db, "--campaign", "grid")
	runDir := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI("report", "--db", db, "--run", runs[0].ID, "-o", runDir); code != ExitOK {
		t.Fatalf("report --run: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(runDir, "index.html")); !strings.Contains(string(b), "run "+runs[0].ID) {
		t.Error("the run's page does not name the run")
	}
	dayDir := filepath.Join(t.TempDir(), "day")
	if code, _, stderr := runCLI("report", "--db", db, "--since", "24h", "-o", dayDir); code != ExitOK {
		t.Fatalf("report --since: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dayDir, "index.html")); !strings.Contains(string(b), "campaign grid") {
		t.Error("the day's page lacks the campaign")
	}

	// An empty campaign says so.
	ctx := context.Background()
	store, err := archive.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "planned", Spec: "--window 1M", SpecFormat: "flags", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	emptyDir := filepath.Join(t.TempDir(), "empty")
	if code, _, stderr := runCLI("report", "--db", db, "--campaign", "planned", "-o", emptyDir); code != ExitOK {
		t.Fatalf("report of an empty campaign: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(emptyDir, "index.html"))
	if !strings.Contains(string(b), "no runs yet") || strings.Contains(string(b), `class="chart"`) {
		t.Error("the empty campaign's page does not say it is empty, or draws a chart")
	}
}

// The page in a real browser: no console errors, no request leaving the
// file, every chart drawn from the archive's numbers, and the table and
// static figures without JavaScript.
func TestReportInChromium(t *testing.T) {
	if _, err := os.Stat(chromium.Path); err != nil {
		t.Skipf("chromium is not installed at %s (apt-get install chromium): the browser test needs it", chromium.Path)
	}
	db := reportCampaign(t)
	dir := filepath.Join(t.TempDir(), "report")
	if code, _, stderr := runCLI("report", "--db", db, "--campaign", "grid", "-o", dir); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	index, _ := filepath.Abs(filepath.Join(dir, "index.html"))
	url := "file://" + index

	b := chromium.Start(t, 1100, 900, 90*time.Second, func(u string) bool {
		return strings.HasPrefix(u, "file:") || strings.HasPrefix(u, "data:")
	})
	ctx := b.Ctx

	type chartState struct {
		Series int         `json:"series"`
		X      []float64   `json:"x"`
		Y      [][]float64 `json:"y"`
		Inked  int         `json:"inked"`
		Title  string      `json:"title"`
	}
	const probe = `(window.wireperfCharts || []).map(function (u) {
		var c = u.root.querySelector("canvas"), g = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, inked = 0;
		for (var i = 3; i < g.length; i += 4) { if (g[i] > 0) { inked++; } }
		var t = u.root.querySelector(".u-title");
		return { series: u.series.length, x: u.data[0], y: u.data.slice(1).map(function (s) { return s.map(function (v) { return v == null ? -1 : v; }); }), inked: inked, title: t ? t.textContent : "" };
	})`
	const tableJS = `Array.from(document.querySelectorAll("table.results tr")).map(function (tr) {
		return Array.from(tr.children).map(function (c) { return c.textContent; });
	})`
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartState](probe))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](tableJS))
	if err != nil {
		t.Fatal(err)
	}
	// The screenshot shows the results table and the sweep chart below it.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("table.results").scrollIntoView({block: "start"}); true`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	chromium.SaveScreenshot(t, shot, "report.png", "WIREPERF_REPORT_SCREENSHOT")

	tab := campaignTable(t, db, "grid")
	// One sweep chart, one goodput chart per run, and two of the hosts'
	// own use (CPU and memory) per run, since a campaign's runs sample
	// both hosts.
	runs := len(listRuns(t, "--db", db, "--campaign", "grid"))
	if want := 1 + 3*runs; len(charts) != want {
		t.Fatalf("%d charts drawn, want %d", len(charts), want)
	}
	hostCharts := 0
	for _, c := range charts {
		if strings.HasPrefix(c.Title, "Host ") {
			hostCharts++
		}
	}
	if hostCharts != 2*runs {
		t.Errorf("%d charts of the hosts' use, want %d (CPU and memory for each of %d runs)", hostCharts, 2*runs, runs)
	}
	for i, c := range charts {
		if len(c.X) == 0 || len(c.Y) == 0 || c.Series != len(c.Y)+1 {
			t.Errorf("chart %d has no data: %+v", i, c)
		}
		for j, s := range c.Y {
			if len(s) != len(c.X) {
				t.Errorf("chart %d series %d: %d values for %d x", i, j, len(s), len(c.X))
			}
		}
		if c.Inked < 1000 {
			t.Errorf("chart %d's canvas is blank (%d pixels inked)", i, c.Inked)
		}
	}
	// The sweep chart shows the pivot's numbers: x the windows, one series
	// per stream count, y the cells in its unit.
	sweep := charts[0]
	div, _ := reportarchive.ChartUnit(tab)
	for i, row := range tab.Rows {
		if i >= len(sweep.X) || sweep.X[i] != *row.Num {
			t.Errorf("sweep chart x %v, want the windows %v", sweep.X, row)
		}
		for j := range tab.Cols {
			cell, ok := tab.Cell(i, j)
			if !ok || j >= len(sweep.Y) || i >= len(sweep.Y[j]) {
				t.Errorf("cell %d,%d missing", i, j)
				continue
			}
			if got := sweep.Y[j][i] * div; math.Abs(got-cell.Value) > 1e-9*cell.Value {
				t.Errorf("sweep chart cell %d,%d = %g bit/s, the archive's pivot %g", i, j, got, cell.Value)
			}
		}
	}
	// The table shows the campaign's numbers as `wireperf table` prints them.
	want := pivotfmt.Grid(tab)
	if got, _ := json.Marshal(cells); string(got) != mustJSON(want) {
		t.Errorf("the page's table\n%s\nthe archive's pivot\n%s", got, mustJSON(want))
	}

	// Without JavaScript: the table and every static figure, no chart.
	type noJSState struct {
		Rows    int `json:"rows"`
		Images  int `json:"images"`
		Loaded  int `json:"loaded"`
		Canvass int `json:"canvases"`
	}
	var noJS noJSState
	ctx2, cancel2 := chromedp.NewContext(ctx)
	defer cancel2()
	if _, err := chromedp.Call(ctx2, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx2, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium without JavaScript: %v", err)
	}
	// The page's scripts are off; the protocol's evaluation still reads the DOM.
	if _, err := chromedp.Run(ctx2, chromedp.Poll[bool](`Array.from(document.images).every(function (i) { return i.complete; })`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatal(err)
	}
	noJS, err = chromedp.Run(ctx2, chromedp.Evaluate[noJSState](`({rows: document.querySelectorAll("table.results tr").length,
			images: document.images.length,
			loaded: Array.from(document.images).filter(function (i) { return i.naturalWidth > 0; }).length,
			canvases: document.querySelectorAll("canvas").length})`))
	if err != nil {
		t.Fatal(err)
	}
	if noJS.Rows != len(want) || noJS.Images < 3 || noJS.Loaded != noJS.Images || noJS.Canvass != 0 {
		t.Errorf("without JavaScript: %+v; want %d table rows, every image loaded, no canvas", noJS, len(want))
	}
	b.Check(t)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A request/response campaign tabulates its latency, and each run draws
// its RTT histogram.
func TestReportRRCampaign(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "rr.db")
	if code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "--rr", "-l", "64,512", "-t", "0.2", "--name", "rr", "--db", db); code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, stderr)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if code, _, stderr := runCLI("report", "--db", db, "--campaign", "rr", "-o", dir); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	page := string(b)
	if !strings.Contains(page, "rr_p50_us, mean over repetitions") {
		t.Error("the rr campaign's table is not of its latency")
	}
	if n := strings.Count(page, `-latency.svg" alt=`); n != 2 { // the images, not their download links
		t.Errorf("%d latency figures, want one per run (2)", n)
	}
}
