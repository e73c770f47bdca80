package reportarchive

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wireperf/wireperf/internal/archive/runrecord"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/chromium"
)

// rrulRun is an RRUL run as wireperf rrul reports one: 2 s idle, 6 s
// under eight flows, 2 s after, the probes' RTT rising by a queue's
// 40 ms under the load.
func rrulRun() *result.RRUL {
	r := &result.RRUL{Host: "b.example", Port: 5201, StartedAt: time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC),
		IdleSeconds: 2, LoadSeconds: 6, AfterSeconds: 2, LoadStartSeconds: 2, LoadEndSeconds: 8, StepSeconds: 0.2,
		UpBitsPerSecond: 36e6, DownBitsPerSecond: 37e6}
	for i, c := range []string{"BE", "BK", "CS5", "EF"} {
		for _, dir := range []string{"up", "down"} {
			f := result.RRULFlow{Class: c, Direction: dir, BitsPerSecond: 9e6, Bytes: 6_750_000, Seconds: 6}
			for t := 2.2; t <= 8.0; t += 0.2 {
				f.Series = append(f.Series, result.SeriesPoint{T: t, V: 9 + 2*math.Sin(t+float64(i))})
			}
			r.Flows = append(r.Flows, f)
		}
	}
	var idle, loaded result.Histogram
	idle.Unit, loaded.Unit = "us", "us"
	for k := range 20 {
		idle.Buckets = append(idle.Buckets, result.HistogramBucket{From: 19000 + 100*float64(k), To: 19099 + 100*float64(k), Count: 30})
		loaded.Buckets = append(loaded.Buckets, result.HistogramBucket{From: 50000 + 1000*float64(k), To: 50999 + 1000*float64(k), Count: 90})
		idle.Count += 30
		loaded.Count += 90
	}
	r.Latency = result.RRULLatency{
		Idle:          result.Percentiles{Count: idle.Count, P50: 20000, P90: 20800, P99: 21000},
		Loaded:        result.Percentiles{Count: loaded.Count, P50: 60000, P90: 68000, P99: 70000},
		After:         result.Percentiles{Count: idle.Count, P50: 20000},
		Increase:      result.Percentiles{Count: loaded.Count, P50: 40000, P90: 47200, P99: 49000},
		IdleHistogram: &idle, LoadedHistogram: &loaded,
	}
	for _, c := range []string{"EF", "BK", "BE"} {
		p := result.RRULProbe{Class: c}
		for t := 0.1; t < 10; t += 0.2 {
			v := 19.5
			if t > 2 && t < 8 {
				v = 19.5 + 40*math.Min(1, (t-2)/0.5)
			}
			p.Series = append(p.Series, result.SeriesPoint{T: t, V: v})
		}
		r.Probes = append(r.Probes, p)
	}
	return r
}

// An RRUL run stored with --save has its figure on the report's page,
// in flent's layout, and the browser shows it: the image loads, at its
// full size, with its downloads. WIREPERF_RRUL_SCREENSHOT names a file
// for a screenshot of the figure, to look at.
func TestRRULFigureOnThePageInChromium(t *testing.T) {
	if _, err := os.Stat(chromium.Path); err != nil {
		t.Skipf("chromium is not installed at %s (apt-get install chromium): the browser test needs it", chromium.Path)
	}
	ctx := context.Background()
	store := openStore(t)
	rec, err := runrecord.RRUL(rrulRun(), nil, []string{"wireperf", "rrul", "b.example"}, time.Date(2026, 12, 6, 22, 0, 10, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Write(ctx, store, Selection{Run: rec, Now: rec.Ended}, dir, "v-test"); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/run/", http.StripPrefix("/run/", http.FileServer(http.Dir(dir))))
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := chromium.Start(t, 1100, 1400, 90*time.Second, func(u string) bool {
		return strings.HasPrefix(u, srv.URL+"/") || strings.HasPrefix(u, "data:")
	})
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(srv.URL+"/run/index.html"), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	type img struct {
		Alt       string  `json:"alt"`
		Src       string  `json:"src"`
		Complete  bool    `json:"complete"`
		Natural   float64 `json:"natural"`
		Shown     float64 `json:"shown"`
		Downloads int     `json:"downloads"`
		Inked     int     `json:"inked"` // pixels not white, the image drawn on a canvas
	}
	// The run's detail opens, as a reader's click opens it.
	const imgsJS = `document.querySelectorAll("details").forEach(function (d) { d.open = true; }), Promise.all(Array.from(document.querySelectorAll("figure img")).map(function (i) {
		i.loading = "eager";
		return (i.complete ? Promise.resolve() : new Promise(function (ok) { i.onload = ok; i.onerror = ok; })).then(function () {
			var c = document.createElement("canvas"), inked = 0;
			c.width = i.naturalWidth; c.height = i.naturalHeight;
			if (c.width > 0) {
				var g = c.getContext("2d");
				g.drawImage(i, 0, 0);
				var d = g.getImageData(0, 0, c.width, c.height).data;
				for (var k = 0; k < d.length; k += 4) { if (d[k+3] > 0 && (d[k] < 200 || d[k+1] < 200 || d[k+2] < 200)) { inked++; } }
			}
			return { alt: i.alt, src: i.getAttribute("src"), complete: i.complete, natural: i.naturalWidth, shown: i.getBoundingClientRect().width,
				downloads: i.closest("figure").querySelectorAll("a.download[download]").length, inked: inked };
		});
	}))`
	imgs, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]img](imgsJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var fig *img
	for i := range imgs {
		if strings.HasPrefix(imgs[i].Alt, "rrul of run "+rec.ID) {
			fig = &imgs[i]
		}
	}
	if fig == nil {
		t.Fatalf("no rrul figure among the page's images: %+v", imgs)
	}
	// Drawn: four panels' lines, axes and labels ink far more than a
	// blank or broken image's few pixels.
	if !fig.Complete || fig.Natural < 400 || fig.Shown < 400 || fig.Downloads == 0 || fig.Inked < 20000 {
		t.Errorf("the rrul figure %+v: want it loaded, drawn, at least 400 px wide, with its downloads", *fig)
	}
	t.Logf("rrul figure %s: %.0f px wide, shown at %.0f px, %d pixels inked", fig.Src, fig.Natural, fig.Shown, fig.Inked)
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`(function () { var i = document.querySelector('img[alt^="rrul of run"]'); i.scrollIntoView(); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	chromium.SaveScreenshot(t, shot, "rrul.png", "WIREPERF_RRUL_SCREENSHOT")
	b.Check(t)
}
