package grid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestJudge(t *testing.T) {
	tcp := Test{Name: "tcp", Interval: 30 * time.Minute, Thresholds: Thresholds{GoodputAmberBps: 500e6, GoodputRedBps: 100e6,
		LossAmberPercent: 0.1, LossRedPercent: 1, RTTp99Amber: 20 * time.Millisecond, RTTp99Red: 50 * time.Millisecond}}
	fresh := now.Add(-5 * time.Minute)
	ok := Cell{Figures: Figures{At: fresh, GoodputBps: 941e6, LostPercent: math.NaN()}, State: "finished"}
	with := func(f func(*Cell)) Cell { c := ok; f(&c); return c }
	tests := []struct {
		name   string
		cell   Cell
		test   Test
		want   Colour
		reason string
	}{
		{"within thresholds", ok, tcp, Green, "within every threshold"},
		{"no run", Cell{}, tcp, Unmeasured, "no result yet"},
		{"two intervals old", with(func(c *Cell) { c.At = now.Add(-60 * time.Minute) }), tcp, Grey, "no result for 2 intervals of 30m (last 1h ago)"},
		{"just under two intervals", with(func(c *Cell) { c.At = now.Add(-60*time.Minute + time.Second) }), tcp, Green, ""},
		{"a failed run is stale too", Cell{Figures: Figures{At: now.Add(-2 * time.Hour)}, State: "failed"}, tcp, Grey, "no result for 2"},
		{"stale intervals set by the test", with(func(c *Cell) { c.At = now.Add(-80 * time.Minute) }),
			Test{Interval: 30 * time.Minute, Thresholds: Thresholds{StaleIntervals: 3}}, Green, ""},
		{"no interval: never stale", with(func(c *Cell) { c.At = now.Add(-1000 * time.Hour) }), Test{}, Green, ""},
		{"failed", Cell{Figures: Figures{At: fresh}, State: "failed", Reason: "connection refused"}, tcp, Red, "last run failed: connection refused"},
		{"missed", Cell{Figures: Figures{At: fresh}, State: "missed", Reason: "no slot"}, tcp, Amber, "last run missed: no slot"},
		{"aborted", Cell{Figures: Figures{At: fresh}, State: "aborted"}, tcp, Amber, "last run aborted"},
		{"unknown state", Cell{Figures: Figures{At: fresh}, State: "running"}, tcp, Grey, "last run running"},
		{"goodput at the amber threshold", with(func(c *Cell) { c.GoodputBps = 500e6 }), tcp, Green, ""},
		{"goodput below amber", with(func(c *Cell) { c.GoodputBps = 499e6 }), tcp, Amber, "goodput 499 Mbits/sec below 500 Mbits/sec"},
		{"goodput below red", with(func(c *Cell) { c.GoodputBps = 99e6 }), tcp, Red, "goodput 99.0 Mbits/sec below 100 Mbits/sec"},
		{"loss at amber", with(func(c *Cell) { c.LostPercent = 0.1 }), tcp, Green, ""},
		{"loss above amber", with(func(c *Cell) { c.LostPercent = 0.5 }), tcp, Amber, "loss 0.5% above 0.1%"},
		{"loss above red", with(func(c *Cell) { c.LostPercent = 3 }), tcp, Red, "loss 3% above 1%"},
		{"RTT above amber", with(func(c *Cell) { c.RTTp99 = 21 * time.Millisecond }), tcp, Amber, "RTT p99 21 ms above 20 ms"},
		{"RTT above red", with(func(c *Cell) { c.RTTp99 = 60 * time.Millisecond }), tcp, Red, "RTT p99 60 ms above 50 ms"},
		{"a TCP mean RTT is judged without a p99", with(func(c *Cell) { c.RTTMean = 25 * time.Millisecond }), tcp, Amber, "RTT mean 25 ms above 20 ms"},
		{"the p99 is judged before the mean", with(func(c *Cell) { c.RTTMean = 60 * time.Millisecond; c.RTTp99 = 10 * time.Millisecond }), tcp, Green, ""},
		{"the worst wins", with(func(c *Cell) { c.GoodputBps = 400e6; c.LostPercent = 2 }), tcp, Red, "loss 2% above 1%"},
		{"goodput not measured is not judged", with(func(c *Cell) { c.GoodputBps = math.NaN() }), tcp, Green, ""},
		{"no thresholds", with(func(c *Cell) { c.GoodputBps = 1 }), Test{Interval: time.Hour}, Green, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.cell, tt.test, now)
			if v.Colour != tt.want {
				t.Errorf("colour %s (%v), want %s", v.Colour, v.Reasons, tt.want)
			}
			if len(v.Reasons) == 0 {
				t.Error("no reason given")
			} else if !strings.HasPrefix(v.Reasons[0], tt.reason) {
				t.Errorf("first reason %q, want it to start %q", v.Reasons[0], tt.reason)
			}
		})
	}
	// Both an amber and a red reason: both said, red first.
	v := Judge(with(func(c *Cell) { c.GoodputBps = 400e6; c.LostPercent = 2 }), tcp, now)
	if len(v.Reasons) != 2 || !strings.HasPrefix(v.Reasons[1], "goodput 400") {
		t.Errorf("reasons %q, want loss then goodput", v.Reasons)
	}
}

func render(t *testing.T, g Grid) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var halfRE = regexp.MustCompile(`(?s)<td data-src="([^"]*)" data-dst="([^"]*)">(.*?)</td>`)
var buttonRE = regexp.MustCompile(`<button type="button" class="half (\w+)" data-dir="(\w+)" data-colour="\w+" data-history="(-?\d+)" title="([^"]*)">`)

// The page's cells, read back out of its HTML: the browser test reads
// the same from the rendered page.
func TestRenderEveryPair(t *testing.T) {
	g, want := meshGrid()
	page := render(t, g)
	sections := strings.Split(page, `<section class="test"`)[1:]
	if len(sections) != 2 {
		t.Fatalf("%d test sections, want 2", len(sections))
	}
	seen := map[halfKey]bool{}
	for i, sec := range sections {
		test := g.Tests[i]
		cells := halfRE.FindAllStringSubmatch(sec, -1)
		if len(cells) != 12 {
			t.Errorf("%s: %d pair cells, want 12 (every ordered pair of 4 hosts)", test.Name, len(cells))
		}
		if n := strings.Count(sec, `<td class="self">`); n != 4 {
			t.Errorf("%s: %d diagonal cells, want 4", test.Name, n)
		}
		for _, c := range cells {
			halves := buttonRE.FindAllStringSubmatch(c[3], -1)
			if wantN := map[bool]int{true: 1, false: 2}[test.OneWay]; len(halves) != wantN {
				t.Errorf("%s %s→%s: %d halves, want %d", test.Name, c[1], c[2], len(halves), wantN)
			}
			for _, h := range halves {
				k := halfKey{c[1], c[2], test.Name, Direction(h[2])}
				seen[k] = true
				if Colour(h[1]) != want[k] {
					t.Errorf("%v is %s, want %s", k, h[1], want[k])
				}
				title := html.UnescapeString(h[4])
				if !strings.HasPrefix(title, c[1]+" "+map[string]string{"forward": "→", "reverse": "←"}[h[2]]+" "+c[2]+", "+test.Name) {
					t.Errorf("%v title %q", k, title)
				}
				if h[3] == "-1" {
					t.Errorf("%v has no history", k)
				}
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d half-cells shown, want %d", len(seen), len(want))
	}
	if strings.Contains(page, "gone-1") {
		t.Error("a host outside the mesh is shown")
	}
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|@import|url\(`).MatchString(page) {
		t.Error("the page refers to another resource")
	}
	if !strings.Contains(page, "goodput amber below 500 Mbits/sec, red below 100 Mbits/sec") {
		t.Error("the tcp test's thresholds are not said")
	}
}

// The tooltip says the last values, and says them as Judge judged them.
func TestTooltip(t *testing.T) {
	c := Cell{State: "finished", Figures: Figures{Src: "a", Dst: "b", Test: "tcp", Direction: Reverse, At: now.Add(-time.Minute),
		GoodputBps: 420e6, LostPercent: 0.25, RTTp50: 11 * time.Millisecond, RTTp99: 14500 * time.Microsecond, LastSuccess: now.Add(-time.Minute)}}
	got := tooltip(c, tcpTest, Judge(c, tcpTest, now))
	want := "a ← b, tcp (reverse)\namber: goodput 420 Mbits/sec below 500 Mbits/sec\nlast run 2026-12-01 11:59:00 UTC: finished\ngoodput 420 Mbits/sec\nloss 0.25%\nRTT p50 11 ms, p99 14.5 ms\nlast success 2026-12-01 11:59:00 UTC"
	if got != want {
		t.Errorf("tooltip\n%s\nwant\n%s", got, want)
	}
}

func TestHistoryJSON(t *testing.T) {
	h := history("a", "b", "tcp", 0)
	// Out of order on input: the chart's x must still ascend.
	h.Points[0], h.Points[len(h.Points)-1] = h.Points[len(h.Points)-1], h.Points[0]
	j := h.json()
	if len(j.X) != 24 {
		t.Fatalf("%d times, want 24", len(j.X))
	}
	for i := 1; i < len(j.X); i++ {
		if j.X[i] <= j.X[i-1] {
			t.Fatalf("x not ascending at %d: %v", i, j.X)
		}
	}
	if len(j.Charts) != 2 || j.Charts[0].Title != "Goodput" || len(j.Charts[0].Series) != 2 {
		t.Fatalf("charts %+v, want goodput both ways and RTT", j.Charts)
	}
	nulls := 0
	for k, y := range j.Charts[0].Series[0] {
		if y == nil {
			nulls++
			continue
		}
		var p Point
		for _, q := range h.Points {
			if float64(q.At.Unix()) == j.X[k] && q.Direction == Forward {
				p = q
			}
		}
		if math.Abs(*y-p.GoodputBps/1e6) > 1e-9 {
			t.Errorf("goodput at %v: %v, want %v", j.X[k], *y, p.GoodputBps/1e6)
		}
	}
	if nulls != 1 || len(j.Events) != 1 || j.Events[0].State != "failed" || j.Events[0].Why != "connection refused" {
		t.Errorf("the failed run: %d gaps, events %+v; want one of each", nulls, j.Events)
	}
	want := routeJSON{T: float64(routeChangeAt.Unix()), At: fmtTime(routeChangeAt), Dir: "forward", From: "10.0.0.1 10.0.1.2", To: "10.0.0.1 10.0.9.1 10.0.1.2"}
	if len(j.Routes) != 1 || j.Routes[0] != want {
		t.Errorf("route changes %+v, want %+v", j.Routes, want)
	}
	// Route changes are listed in time order, whatever order they came in.
	h.RouteChanges = append(h.RouteChanges, RouteChange{At: routeChangeAt.Add(-time.Hour), Direction: Reverse})
	if j := h.json(); len(j.Routes) != 2 || j.Routes[0].Dir != "reverse" || j.Routes[0].T >= j.Routes[1].T {
		t.Errorf("route changes %+v: not in time order", j.Routes)
	}
	if j := history("a", "b", "latency", 0).json(); j.Routes == nil || len(j.Routes) != 0 {
		t.Errorf("no route change: %#v, want an empty list", j.Routes)
	}
}

func TestPageEscapes(t *testing.T) {
	g := Grid{Title: "</title><script>x()</script>", Generated: now, Hosts: []string{"<b>a", "b"},
		Tests:     []Test{{Name: "t</script>", Interval: time.Hour}},
		Cells:     []Cell{{Figures: Figures{Src: "<b>a", Dst: "b", Test: "t</script>", At: now}, State: "failed", Reason: `"><script>y()</script>`}},
		Histories: []History{{Src: "<b>a", Dst: "b", Test: "t</script>", Points: []Point{{At: now, State: "failed", Reason: "</script><script>z()"}}}}}
	page := render(t, g)
	for _, bad := range []string{"<script>x()", "<script>y()", "<script>z()", "<b>a"} {
		if strings.Contains(page, bad) {
			t.Errorf("%q is not escaped", bad)
		}
	}
	m := regexp.MustCompile(`var histories = (\[.*\]);`).FindStringSubmatch(page)
	var hs []historyJSON
	if m == nil || json.Unmarshal([]byte(m[1]), &hs) != nil || len(hs) != 1 || hs[0].Events[0].Why != "</script><script>z()" {
		t.Errorf("history data does not read back: %v", m)
	}
}

func TestEmptyGrid(t *testing.T) {
	page := render(t, Grid{})
	if !strings.Contains(page, `id="empty"`) || !strings.Contains(page, "var histories = [];") {
		t.Error("an empty grid does not say so")
	}
}

func TestHandler(t *testing.T) {
	g, _ := meshGrid()
	fail := false
	srv := httptest.NewServer(Handler(func(ctx context.Context) (Grid, error) {
		if fail {
			return Grid{}, errors.New("archive unreachable")
		}
		return g, nil
	}))
	defer srv.Close()
	get := func(method string) (*http.Response, string) {
		req, _ := http.NewRequest(method, srv.URL+"/grid", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	resp, body := get("GET")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(body, "ams-1") {
		t.Errorf("GET: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get("POST"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	// Without a time of its own, the grid is judged at the request's: a
	// run three hours old of a test every half hour is grey.
	g = Grid{Hosts: []string{"a", "b"}, Tests: []Test{tcpTest},
		Cells: []Cell{{Figures: Figures{Src: "a", Dst: "b", Test: "tcp", At: time.Now().Add(-3 * time.Hour), GoodputBps: 941e6}, State: "finished"}}}
	if _, body := get("GET"); !strings.Contains(body, `class="half grey" data-dir="forward"`) {
		t.Error("a grid without its time is not judged at the request's")
	}
	fail = true
	resp, body = get("GET")
	if resp.StatusCode != 500 || strings.TrimSpace(body) != "grid: archive unreachable" {
		t.Errorf("failed load: %d %q", resp.StatusCode, body)
	}
}

// A pair nothing schedules is drawn as not measured, whatever result an
// old task left, and counted apart from grey.
func TestUnscheduledPair(t *testing.T) {
	g, want := meshGrid()
	page := render(t, g)
	sec := strings.Split(page, `<section class="test"`)[2] // latency
	var found bool
	for _, c := range halfRE.FindAllStringSubmatch(sec, -1) {
		if c[1] != unscheduled.Src || c[2] != unscheduled.Dst {
			continue
		}
		found = true
		h := buttonRE.FindStringSubmatch(c[3])
		if h == nil || h[1] != string(Unmeasured) || !strings.Contains(c[3], "→ not scheduled</button>") ||
			!strings.Contains(html.UnescapeString(h[4]), "\nunmeasured: not scheduled") {
			t.Errorf("unscheduled pair drawn as %q", c[3])
		}
	}
	if !found {
		t.Fatal("the unscheduled pair is not drawn")
	}
	var latencyGrey, latencyUnmeasured int
	for k, c := range want {
		if k.test == "latency" {
			latencyGrey += map[bool]int{true: 1}[c == Grey]
			latencyUnmeasured += map[bool]int{true: 1}[c == Unmeasured]
		}
	}
	if latencyUnmeasured != 1 {
		t.Fatalf("fixture: %d unmeasured latency pairs, want 1", latencyUnmeasured)
	}
	summary := regexp.MustCompile(`Now: ([^<]*)\.</p>`).FindStringSubmatch(sec)
	if summary == nil || !strings.Contains(summary[1], fmt.Sprintf("%d grey", latencyGrey)) || !strings.Contains(summary[1], "1 not measured") {
		t.Errorf("latency summary %q, want %d grey and 1 not measured", summary, latencyGrey)
	}
}

// A TCP test's RTT is its mean, said as such, and judged by the RTT
// thresholds when no p99 was measured.
func TestTooltipTCPMean(t *testing.T) {
	test := Test{Name: "tcp", Thresholds: Thresholds{RTTp99Amber: 20 * time.Millisecond}}
	c := Cell{State: "finished", Figures: Figures{Src: "a", Dst: "b", Test: "tcp", Direction: Forward, At: now.Add(-time.Minute),
		GoodputBps: math.NaN(), LostPercent: math.NaN(), RTTMean: 25 * time.Millisecond, LastSuccess: now.Add(-time.Minute)}}
	v := Judge(c, test, now)
	got := tooltip(c, test, v)
	want := "a → b, tcp (forward)\namber: RTT mean 25 ms above 20 ms\nlast run 2026-12-01 11:59:00 UTC: finished\nRTT mean 25 ms (TCP's smoothed RTT, no percentiles; the RTT thresholds judge it)\nlast success 2026-12-01 11:59:00 UTC"
	if got != want {
		t.Errorf("tooltip\n%s\nwant\n%s", got, want)
	}
	if l := shortLabel(c, v); l != "25 ms" {
		t.Errorf("label %q, want the mean", l)
	}
	if strings.Contains(got, "p50") || strings.Contains(got, "p99") {
		t.Errorf("a TCP test's tooltip names a percentile: %q", got)
	}
}
