package reportarchive

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/testutil/chromium"
)

// figureState is what the browser shows of one chart's figure.
type figureState struct {
	Drawn      bool `json:"drawn"`
	Canvases   int  `json:"canvases"`
	ImgShown   int  `json:"imgShown"`
	Downloads  int  `json:"downloads"`
	HasStatic  bool `json:"hasStatic"`
	ChartInked int  `json:"chartInked"`
}

const figuresJS = `Array.from(document.querySelectorAll("figure.chart-figure")).map(function (f) {
	var shown = Array.from(f.querySelectorAll("img")).filter(function (i) { return getComputedStyle(i).display !== "none"; }).length;
	var c = f.querySelector(".chart canvas"), inked = 0;
	if (c) {
		var g = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (var i = 3; i < g.length; i += 4) { if (g[i] > 0) { inked++; } }
	}
	return { drawn: f.classList.contains("drawn"), canvases: f.querySelectorAll(".chart canvas").length, imgShown: shown,
		downloads: f.querySelectorAll("a.download[download]").length, hasStatic: !!f.querySelector("img.static"), chartInked: inked };
})`

// downloadsJS fetches every download link and says what came back: the
// link's format and the file's first bytes.
const downloadsJS = `Promise.all(Array.from(document.querySelectorAll("a.download")).map(function (a) {
	return fetch(a.href).then(function (r) { return r.arrayBuffer().then(function (b) {
		var head = Array.from(new Uint8Array(b.slice(0, 400))).map(function (x) { return String.fromCharCode(x); }).join("");
		return { link: a.textContent, href: a.getAttribute("href"), status: r.status, head: head };
	}); });
}))`

type download struct {
	Link   string `json:"link"`
	Href   string `json:"href"`
	Status int    `json:"status"`
	Head   string `json:"head"`
}

// The page in a browser: each chart shows once, as the chart, with its
// static figure hidden and offered as SVG and PNG downloads that fetch
// the figure; without JavaScript the static figure shows in its place.
func TestPageFiguresOnceInChromium(t *testing.T) {
	if _, err := os.Stat(chromium.Path); err != nil {
		t.Skipf("chromium is not installed at %s (apt-get install chromium): the browser test needs it", chromium.Path)
	}
	ctx := context.Background()
	store := openStore(t)
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	putGrid(t, store, `{"args":["--window=64K,4M","-P=1,2","b"]}`, now)
	campaignDir := filepath.Join(t.TempDir(), "campaign")
	if _, err := Write(ctx, store, Selection{Campaign: "grid", Now: now}, campaignDir, "v-test"); err != nil {
		t.Fatal(err)
	}
	// One run with its document: its goodput chart and its timeline figure
	// are one figure.
	doc, err := os.ReadFile("../../archive/testdata/tcp-p2.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := archive.ParseDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	run := &archive.Run{ID: "s1", State: archive.StateFinished, Source: archive.SourceNative, Started: p.Started,
		Document: doc, DocumentFormat: archive.FormatJSON, Summary: p.Summary, Intervals: p.Intervals, Limits: p.Limits, Axes: p.Axes}
	runDir := filepath.Join(t.TempDir(), "run")
	if _, err := Write(ctx, store, Selection{Run: run, Now: now}, runDir, "v-test"); err != nil {
		t.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/campaign/", http.StripPrefix("/campaign/", http.FileServer(http.Dir(campaignDir))))
	mux.Handle("/run/", http.StripPrefix("/run/", http.FileServer(http.Dir(runDir))))
	// The browser asks a server for its icon; the page has none.
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := chromium.Start(t, 1100, 900, 90*time.Second, func(u string) bool {
		return strings.HasPrefix(u, srv.URL+"/") || strings.HasPrefix(u, "data:")
	})

	for _, page := range []struct {
		path   string
		charts int // figures that are charts
	}{
		{"/campaign/index.html", 1 + 8}, // the sweep, and each run's goodput
		{"/run/index.html", 1},
	} {
		if err := chromedp.Do(b.Ctx, chromedp.Navigate(srv.URL+page.path), chromedp.WaitReady("body")); err != nil {
			t.Fatalf("%s: %v", page.path, err)
		}
		figs, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]figureState](figuresJS))
		if err != nil {
			t.Fatal(err)
		}
		if len(figs) != page.charts {
			t.Errorf("%s: %d chart figures, want %d", page.path, len(figs), page.charts)
		}
		withStatic := 0
		for i, f := range figs {
			if !f.Drawn || f.Canvases != 1 || f.ImgShown != 0 || f.ChartInked < 1000 {
				t.Errorf("%s: chart figure %d shows %d charts and %d images (drawn %v, %d pixels inked); want the chart alone",
					page.path, i, f.Canvases, f.ImgShown, f.Drawn, f.ChartInked)
			}
			if f.HasStatic {
				withStatic++
				if f.Downloads == 0 {
					t.Errorf("%s: chart figure %d has a static figure and no download", page.path, i)
				}
			}
		}
		if withStatic == 0 {
			t.Errorf("%s: no chart has its static figure to download", page.path)
		}
		downloads, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]download](downloadsJS, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		formats := map[string]int{}
		for _, d := range downloads {
			formats[d.Link]++
			ok := d.Status == http.StatusOK
			switch d.Link {
			case "SVG":
				ok = ok && strings.HasSuffix(d.Href, ".svg") && strings.Contains(d.Head, "<svg")
			case "PNG":
				ok = ok && strings.HasSuffix(d.Href, ".png") && strings.HasPrefix(d.Head, "\u0089PNG") // the bytes as JavaScript characters
			default:
				ok = false
			}
			if !ok {
				t.Errorf("%s: download %s %s: status %d, begins %.40q", page.path, d.Link, d.Href, d.Status, d.Head)
			}
		}
		if formats["SVG"] == 0 || (page.path == "/campaign/index.html" && formats["PNG"] == 0) {
			t.Errorf("%s: downloads %v; want SVG, and PNG for the campaign's figures", page.path, formats)
		}
	}
	b.Check(t)

	// Without JavaScript: the static figure in the chart's place.
	ctx2, cancel := chromedp.NewContext(b.Ctx)
	defer cancel()
	if _, err := chromedp.Call(ctx2, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx2, chromedp.Navigate(srv.URL+"/campaign/index.html"), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	figs, err := chromedp.Run(ctx2, chromedp.Evaluate[[]figureState](figuresJS))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range figs {
		if f.HasStatic && (f.Drawn || f.Canvases != 0 || f.ImgShown != 1) {
			t.Errorf("without JavaScript, chart figure %d: %+v; want its static figure alone", i, f)
		}
	}
}
