package grid

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wireperf/wireperf/internal/testutil/chromium"
)

// thousandHostGrid is a mesh of 1,000 hosts in 10 groups of 100, one
// throughput test each host runs to 10 partners (a sampled mesh: its
// other pairs are not scheduled), each pair measured a minute ago; every
// 7th pair's goodput is below the amber threshold.
func thousandHostGrid() Grid {
	const hosts, groups, partners = 1000, 10, 10
	g := Grid{Title: "A thousand hosts", Generated: now, Tests: []Test{{Name: "tput", Command: "client -t 10", Interval: 10 * time.Minute,
		OneWay: true, Thresholds: Thresholds{GoodputAmberBps: 500e6}}}, Scheduled: map[PairKey]bool{}}
	for i := range hosts {
		g.Hosts = append(g.Hosts, fmt.Sprintf("host-%04d", i))
	}
	for k := range groups {
		g.Groups = append(g.Groups, Group{Name: fmt.Sprintf("region-%02d", k), Hosts: g.Hosts[k*hosts/groups : (k+1)*hosts/groups]})
	}
	n := 0
	for i, src := range g.Hosts {
		for p := 1; p <= partners; p++ {
			dst := g.Hosts[(i+p*97)%hosts]
			n++
			bps := 941e6
			if n%7 == 0 {
				bps = 420e6
			}
			g.Scheduled[PairKey{src, dst, "tput"}] = true
			g.Cells = append(g.Cells, Cell{State: "finished", Figures: Figures{Src: src, Dst: dst, Test: "tput", Direction: Forward,
				At: now.Add(-time.Minute), GoodputBps: bps, LostPercent: math.NaN(), RTTMean: 12 * time.Millisecond, LastSuccess: now.Add(-time.Minute)}})
		}
	}
	return g
}

// The grid of 1,000 hosts in chromium: the page holds a group × group
// summary, not a million cells; a click on a summary cell fetches and
// draws its block; the search box finds a host's row. The time from
// navigation to the summary drawn is logged ("grid of 1,000 hosts
// rendered in"); bench/grid-scale.sh checks it against 2 s.
func TestThousandHostGridInChromium(t *testing.T) {
	g := thousandHostGrid()
	load := func(context.Context) (Grid, error) { return g, nil }
	mux := http.NewServeMux()
	mux.Handle("GET /grid", Handler(load))
	mux.Handle("GET /grid/block", BlockHandler(func(r *http.Request) (Grid, error) { return load(r.Context()) }))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := chromium.Start(t, 1200, 900, 120*time.Second, func(u string) bool {
		return u == srv.URL+"/grid" || strings.HasPrefix(u, srv.URL+"/grid/block?") || strings.HasPrefix(u, "data:")
	})
	ctx := b.Ctx
	began := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/grid"), chromedp.WaitReady("table.summary")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	// Measured, not asserted: timing belongs to bench/grid-scale.
	t.Logf("grid of 1,000 hosts rendered in %d ms", time.Since(began).Milliseconds())

	type page struct {
		Summary, Halves, Bytes int
		Amber                  string
	}
	p, err := chromedp.Run(ctx, chromedp.Evaluate[page](`({ summary: document.querySelectorAll("table.summary button.block").length,
		halves: document.querySelectorAll("button.half").length, bytes: document.documentElement.outerHTML.length,
		amber: (document.querySelector("table.summary button.block.amber") || {}).textContent || "" })`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary != 100 || p.Halves != 0 {
		t.Errorf("summary cells %d, half-cells %d; want 10 × 10 and none", p.Summary, p.Halves)
	}
	t.Logf("page: %d bytes of HTML", p.Bytes)
	if !strings.Contains(p.Amber, "amber") || !strings.Contains(p.Amber, "green") || !strings.Contains(p.Amber, "not measured") {
		t.Errorf("an amber block says %q; want its worst pair and its counts by colour", p.Amber)
	}

	// A click on region-03 → region-05 draws its 100 × 100 hosts.
	if err := chromedp.Do(ctx, chromedp.Click(`button.block[data-from="region-03"][data-to="region-05"]`),
		chromedp.WaitVisible(`#block-0 table.grid`)); err != nil {
		t.Fatalf("drill-down: %v", err)
	}
	type block struct {
		Rows, Cols, Cells int
		First, Title      string
	}
	bl, err := chromedp.Run(ctx, chromedp.Evaluate[block](`(function () { var v = document.getElementById("block-0");
		return { rows: v.querySelectorAll("th[scope=row]").length, cols: v.querySelectorAll("th[scope=col]").length,
			cells: v.querySelectorAll("td[data-src]").length, first: v.querySelector("th[scope=row]").textContent,
			title: v.querySelector("h3").textContent }; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if bl.Rows != 100 || bl.Cols != 100 || bl.Cells != 100*100 || bl.First != "host-0300" || bl.Title != "tput: region-03 → region-05" {
		t.Errorf("block %+v; want region-03's 100 hosts × region-05's", bl)
	}

	// The search box finds host-0742 in region-07 and marks its row.
	if err := chromedp.Do(ctx, chromedp.SetValue("#host-search", "host-0742"), chromedp.Click("#search button"),
		chromedp.WaitReady(`#block-0 tr.found`)); err != nil {
		t.Fatalf("search: %v", err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector("#block-0 tr.found th").textContent,
		document.getElementById("search-result").textContent, document.getElementById("block-0").getAttribute("data-from")]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 3 || found[0] != "host-0742" || found[1] != "host-0742 is in region-07" || found[2] != "region-07" {
		t.Errorf("search found %q", found)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue("#host-search", "nowhere"), chromedp.Click("#search button")); err != nil {
		t.Fatal(err)
	}
	if msg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("search-result").textContent`)); err != nil || msg != "no host named nowhere" {
		t.Errorf("search for an unknown host says %q (%v)", msg, err)
	}
	b.Check(t)
}

// A block is asked for by test index and two of the grid's groups;
// anything else is refused with one line.
func TestBlockBadRequest(t *testing.T) {
	g := thousandHostGrid()
	h := BlockHandler(func(*http.Request) (Grid, error) { return g, nil })
	for q, want := range map[string]string{
		"test=9&from=region-00&to=region-01": `grid: test "9": want the index of one of the grid's 1 tests`,
		"test=0&from=nowhere&to=region-01":   `grid: group "nowhere": not a group of the grid`,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/grid/block?"+q, nil))
		if rec.Code != http.StatusBadRequest || strings.TrimSpace(rec.Body.String()) != want {
			t.Errorf("%s: %d %q, want 400 %q", q, rec.Code, rec.Body.String(), want)
		}
	}
}
