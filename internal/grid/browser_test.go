package grid

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/wireperf/wireperf/internal/testutil/chromium"
)

// The page's palette as the browser computes it.
var computed = map[Colour]string{
	Green: "rgb(47, 158, 68)",
	Amber: "rgb(242, 169, 0)",
	Red:   "rgb(208, 49, 45)",
	Grey:  "rgb(184, 184, 184)",
	// Drawn empty (white, hatched), not grey.
	Unmeasured: "rgb(255, 255, 255)",
}

// The grid in a real browser, served as the daemon serves it: every
// pair's half-cells in the colour their test's thresholds give, each with
// its hover text; a click draws the pair's history; no console error and
// no request beyond the page. The screenshot goes to the test's temp dir
// and, when WIREPERF_GRID_SCREENSHOT names a file, there too.
func TestGridInChromium(t *testing.T) {
	g, want := meshGrid()
	mux := http.NewServeMux()
	mux.Handle("GET /grid", Handler(func(context.Context) (Grid, error) { return g, nil }))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close) // after the browser's cleanup has closed its connections
	b := chromium.Start(t, 1000, 800, 90*time.Second, func(u string) bool {
		return u == srv.URL+"/grid" || strings.HasPrefix(u, "data:")
	})
	ctx := b.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/grid"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}

	type half struct {
		Test, Src, Dst, Dir, Background, Title, Text string
	}
	const halvesJS = `Array.from(document.querySelectorAll("button.half")).map(function (b) {
		var td = b.closest("td");
		return { test: b.closest("section").getAttribute("data-test"), src: td.getAttribute("data-src"), dst: td.getAttribute("data-dst"),
			dir: b.getAttribute("data-dir"), background: getComputedStyle(b).backgroundColor, title: b.title, text: b.textContent };
	})`
	halves, err := chromedp.Run(ctx, chromedp.Evaluate[[]half](halvesJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(halves) != len(want) {
		t.Errorf("%d half-cells drawn, want %d", len(halves), len(want))
	}
	cells := map[halfKey]Cell{}
	for _, c := range g.Cells {
		cells[halfKey{c.Src, c.Dst, c.Test, dirOr(c.Direction)}] = c
	}
	seen := map[halfKey]bool{}
	for _, h := range halves {
		k := halfKey{h.Src, h.Dst, h.Test, Direction(h.Dir)}
		colour, ok := want[k]
		if !ok || seen[k] {
			t.Errorf("half-cell %v drawn, unexpected or twice", k)
			continue
		}
		seen[k] = true
		if h.Background != computed[colour] {
			t.Errorf("%v is drawn %s, want %s %s", k, h.Background, colour, computed[colour])
		}
		arrow := map[string]string{"forward": "→", "reverse": "←"}[h.Dir]
		if !strings.HasPrefix(h.Title, h.Src+" "+arrow+" "+h.Dst+", "+h.Test) || !strings.Contains(h.Title, "\n"+string(colour)+": ") {
			t.Errorf("%v hover text %q", k, h.Title)
		}
		if c := cells[k]; c.State == "finished" && measured(c.GoodputBps) && !strings.Contains(h.Title, "goodput "+rate(c.GoodputBps)) {
			t.Errorf("%v hover text lacks its goodput %s: %q", k, rate(c.GoodputBps), h.Title)
		}
	}

	// A click opens the pair's history, drawn from its runs.
	type chartState struct {
		Title  string `json:"title"`
		Series int    `json:"series"`
		X      int    `json:"x"`
		Inked  int    `json:"inked"`
	}
	const chartsJS = `document.getElementById("history").hidden ? [] : (window.wireperfCharts || []).map(function (u) {
		var c = u.root.querySelector("canvas"), g = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, inked = 0;
		for (var i = 3; i < g.length; i += 4) { if (g[i] > 0) { inked++; } }
		return { title: u.root.querySelector(".u-title").textContent, series: u.series.length, x: u.data[0].length, inked: inked };
	})`
	open := func(test int, src, dst string, dir Direction) []chartState {
		t.Helper()
		sel := fmt.Sprintf(`#test-%d td[data-src=%q][data-dst=%q] button[data-dir=%q]`, test, src, dst, dir)
		if err := chromedp.Do(ctx, chromedp.Click(sel)); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("history").hidden && window.wireperfCharts.length > 0`,
			chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("the history of %s does not open: %v", sel, err)
		}
		charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartState](chartsJS))
		if err != nil {
			t.Fatal(err)
		}
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("history-title").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%s ⇄ %s, %s", src, dst, g.Tests[test].Name); title != want {
			t.Errorf("history title %q, want %q", title, want)
		}
		for _, c := range charts {
			if c.X != 24 || c.Inked < 500 {
				t.Errorf("%s: chart %+v; want 24 runs drawn", sel, c)
			}
		}
		return charts
	}
	udp := open(1, "lon-1", "par-1", Forward)
	if len(udp) != 2 || !strings.HasPrefix(udp[0].Title, "Round-trip time") || udp[0].Series != 3 || !strings.HasPrefix(udp[1].Title, "Loss") || udp[1].Series != 2 {
		t.Errorf("latency history charts %+v; want RTT p50 and p99, and loss", udp)
	}
	tcp := open(0, "ams-1", "fra-1", Reverse)
	if len(tcp) != 2 || !strings.HasPrefix(tcp[0].Title, "Goodput") || tcp[0].Series != 3 {
		t.Errorf("tcp history charts %+v; want goodput both ways, and RTT", tcp)
	}
	// The route change is marked on each chart, a vertical line in the
	// marker's colour at its time, and listed below them.
	type routeState struct {
		Marked []bool `json:"marked"`
		Listed int    `json:"listed"`
	}
	routeJS := fmt.Sprintf(`({ marked: window.wireperfCharts.map(function (u) {
		var c = u.root.querySelector("canvas"), x = Math.round(u.valToPos(%d, "x", true));
		var px = c.getContext("2d").getImageData(x - 1, Math.round(u.bbox.top), 3, Math.round(u.bbox.height)).data, n = 0;
		for (var i = 0; i < px.length; i += 4) { if (px[i] > 90 && px[i] < 140 && px[i + 1] < 110 && px[i + 2] > 200) { n++; } }
		return n > u.bbox.height / 3;
	}), listed: document.querySelectorAll("#history-events li.route").length })`, routeChangeAt.Unix())
	rs, err := chromedp.Run(ctx, chromedp.Evaluate[routeState](routeJS))
	if err != nil {
		t.Fatal(err)
	}
	if rs.Listed != 1 || len(rs.Marked) != 2 || !rs.Marked[0] || !rs.Marked[1] {
		t.Errorf("route change: %+v; want a marker on both charts and one line in the list", rs)
	}

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	chromium.SaveScreenshot(t, shot, "grid.png", "WIREPERF_GRID_SCREENSHOT")

	// Without JavaScript the cells, their colours and hover text remain.
	ctx2, cancel2 := chromedp.NewContext(ctx)
	defer cancel2()
	if _, err := chromedp.Call(ctx2, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx2, chromedp.Navigate(srv.URL+"/grid"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium without JavaScript: %v", err)
	}
	noJS, err := chromedp.Run(ctx2, chromedp.Evaluate[[]half](halvesJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(noJS) != len(halves) {
		t.Errorf("without JavaScript %d half-cells, want %d", len(noJS), len(halves))
	}
	for i := range min(len(noJS), len(halves)) {
		if noJS[i] != halves[i] {
			t.Errorf("without JavaScript half-cell %d is %+v, with it %+v", i, noJS[i], halves[i])
		}
	}

	b.Check(t)
}
