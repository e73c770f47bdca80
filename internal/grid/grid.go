// Package grid renders the mesh as the page research networks watch: a
// matrix per test with sources as rows and destinations as columns, each
// cell split into the forward and the reverse direction and coloured by
// the test's thresholds. Hovering a cell shows its last values (a title,
// so it works without JavaScript); clicking it draws the pair's history
// with the charts reports use. The page is self-contained: it makes no
// request of its own, but for a large mesh's blocks. Past SummaryHosts
// hosts each test is a matrix of the mesh's groups, and a block of hosts
// is fetched when its group cell is clicked (BlockHandler).
package grid

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/report"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/units"
)

// Direction is which way a half-cell's data flowed: from the row's host
// to the column's (Forward), or back in the same run (Reverse).
type Direction = schedule.Direction

const (
	Forward = schedule.Forward
	Reverse = schedule.Reverse
)

// Grid is everything the page shows.
type Grid struct {
	Title string
	// Generated is the time the cells are judged at: now. Handler sets
	// it to the request's time when load leaves it zero.
	Generated time.Time
	// Refresh, when set, reloads the page this often.
	Refresh time.Duration
	// Hosts are the mesh's hosts, in the order of rows and columns.
	Hosts []string
	// Tests get a matrix each, in this order.
	Tests []Test
	// Cells are each pair's last run, one per (Src, Dst, Test, Direction).
	// A cell whose hosts or test the grid does not name is not shown.
	Cells []Cell
	// Histories are the pairs' past runs, drawn when a cell is clicked.
	Histories []History
	// Groups, when set, partition Hosts: a grid of more than
	// SummaryHosts hosts is then drawn as group × group summaries.
	Groups []Group
	// Scheduled are the pairs some task measures. A pair not in it is
	// drawn as not measured rather than judged; nil: every pair is.
	Scheduled map[PairKey]bool
}

// PairKey names a test from Src to Dst.
type PairKey struct{ Src, Dst, Test string }

// Test is one test of the mesh and how its cells are judged.
type Test struct {
	Name string
	// Command is the test's command line, shown under its name.
	Command string
	// Interval is how often the test repeats; staleness counts in it.
	Interval time.Duration
	// OneWay tests have no reverse direction: their cells are not split.
	OneWay     bool
	Thresholds Thresholds
}

// Thresholds colour a finished run's values; a zero threshold is not
// checked. Goodput is bad below its thresholds, loss and RTT above.
type Thresholds struct {
	GoodputAmberBps, GoodputRedBps   float64
	LossAmberPercent, LossRedPercent float64
	RTTp99Amber, RTTp99Red           time.Duration
	// StaleIntervals intervals without a result turn a cell grey
	// (DefaultStaleIntervals when zero).
	StaleIntervals int
}

// Figures are a pair's last figures, as /metrics has them too.
type Figures = schedule.PairFigures

// Cell is the last run of one test from Src to Dst, in one direction.
type Cell struct {
	Figures
	// State is the run's state: finished, failed, missed or aborted.
	State, Reason string
}

// History is one pair's past runs, both directions, for one test.
type History struct {
	Src, Dst, Test string
	Points         []Point
	// RouteChanges are the times the pair's path changed, as its trace
	// tests recorded them: the charts mark each with a vertical line.
	RouteChanges []RouteChange
}

// RouteChange is a change of the path from Src to Dst (Forward) or back
// (Reverse): From and To are its hops' addresses, "*" for a silent one.
type RouteChange struct {
	At        time.Time
	Direction Direction
	From, To  []string
}

// Point is one past run in one direction; values as in Cell.
type Point struct {
	At            time.Time
	Direction     Direction
	State, Reason string
	GoodputBps    float64
	LostPercent   float64
	RTTp50        time.Duration
	RTTp99        time.Duration
	RTTMean       time.Duration
}

// Handler serves the page, built by load on every request (GET or HEAD).
// A load that fails is a 500 with the error's one line, logged.
func Handler(load func(ctx context.Context) (Grid, error)) http.Handler {
	return pageHandler(func(ctx context.Context) ([]byte, error) { return renderPage(ctx, load) })
}

// CachedHandler is Handler drawing the page at most once every ttl on
// now's clock: requests meanwhile get that page, and requests that come
// while it is drawn wait for it, so that a summarised page of 1,000
// hosts (some 10 s of CPU to judge every half-cell) costs that once a
// ttl however many load it at once. The page says when it was drawn.
func CachedHandler(load func(ctx context.Context) (Grid, error), ttl time.Duration, now func() time.Time) http.Handler {
	var mu sync.Mutex
	var page []byte
	var drawn time.Time
	return pageHandler(func(ctx context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		if page != nil && t.Sub(drawn) < ttl && !t.Before(drawn) {
			return page, nil
		}
		b, err := renderPage(ctx, load)
		if err != nil {
			return nil, err
		}
		page, drawn = b, t
		return b, nil
	})
}

func renderPage(ctx context.Context, load func(ctx context.Context) (Grid, error)) ([]byte, error) {
	g, err := load(ctx)
	if err != nil {
		return nil, err
	}
	if g.Generated.IsZero() {
		g.Generated = time.Now()
	}
	var b bytes.Buffer
	if err := Render(&b, g); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func pageHandler(page func(ctx context.Context) ([]byte, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "grid: method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b, err := page(r.Context())
		if err != nil {
			slog.ErrorContext(r.Context(), "grid page", "err", err)
			http.Error(w, "grid: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		// The page needs nothing but itself; the browser is told so.
		// A summarised page fetches its blocks from the same origin.
		h.Set("Content-Security-Policy", "default-src 'none'; connect-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		w.Write(b)
	})
}

// Render writes the page as HTML to w.
func Render(w io.Writer, g Grid) error {
	v := view{Title: g.Title, Hosts: g.Hosts}
	v.UPlotJS, v.UPlotCSS, v.License = report.UPlot()
	if v.Title == "" {
		v.Title = "wireperf mesh"
	}
	if !g.Generated.IsZero() {
		v.Generated = fmtTime(g.Generated)
	}
	if g.Refresh > 0 {
		v.RefreshSeconds = int(max(g.Refresh, time.Second) / time.Second)
	}
	cells := g.lastCells()
	hists, histIDs := g.histories(func(h History) bool { return !g.Summarised() })
	v.Summarised, v.GroupCount = g.Summarised(), len(g.Groups)
	for _, gr := range g.Groups {
		for _, h := range gr.Hosts {
			v.HostGroups = append(v.HostGroups, hostGroup{h, gr.Name})
		}
	}
	var srcs []string
	if !v.Summarised {
		srcs = g.Sources()
	}
	for ti, t := range g.Tests {
		tv := testView{Test: t, Anchor: fmt.Sprintf("test-%d", ti), Index: ti, Legend: legend(t), Counts: map[Colour]int{}, Columns: g.Hosts}
		if v.Summarised {
			sv := g.summary(t, cells, tv.Counts)
			tv.Summary2 = &sv
		} else {
			tv.Rows = g.rows(t, srcs, g.Hosts, cells, histIDs, tv.Counts)
		}
		for _, col := range Colours {
			if n := tv.Counts[col]; n > 0 {
				tv.Summary = append(tv.Summary, fmt.Sprintf("%d %s", n, colourWords(col)))
			}
		}
		v.Tests = append(v.Tests, tv)
	}
	if hists == nil {
		hists = []historyJSON{}
	}
	// json.Marshal escapes <, > and &, so the data cannot close its script.
	b, err := json.Marshal(hists)
	if err != nil {
		return err
	}
	v.Histories = template.JS(b)
	return page.Execute(w, v)
}

// Sources are the hosts drawn as rows: those some scheduled pair starts
// from, in the order of Hosts (every host when Scheduled is nil). A host
// only measured to, by ping or tcp-connect, runs no daemon: it is a
// column with no row of its own, rather than a row of pairs that can
// never be measured.
func (g Grid) Sources() []string {
	return onlySources(g.Hosts, g.sourceSet())
}

// sourceSet is the hosts some scheduled pair starts from; nil when
// Scheduled is (every host is then a source).
func (g Grid) sourceSet() map[string]bool {
	if g.Scheduled == nil {
		return nil
	}
	from := make(map[string]bool, len(g.Hosts))
	for k, on := range g.Scheduled {
		if on {
			from[k.Src] = true
		}
	}
	return from
}

// onlySources is hosts in sources, in their order; all of them when
// sources is nil.
func onlySources(hosts []string, sources map[string]bool) []string {
	if sources == nil {
		return hosts
	}
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if sources[h] {
			out = append(out, h)
		}
	}
	return out
}

// nanValue is a figure not measured.
var nanValue = math.NaN()

// histories are the grid's histories that keep says to send, as the
// page's script draws them, and each one's index by pair.
func (g Grid) histories(keep func(History) bool) ([]historyJSON, map[PairKey]int) {
	ids := map[PairKey]int{}
	hists := []historyJSON{}
	hosts := make(map[string]bool, len(g.Hosts))
	for _, h := range g.Hosts {
		hosts[h] = true
	}
	for _, h := range g.Histories {
		k := PairKey{h.Src, h.Dst, h.Test}
		if _, dup := ids[k]; dup || !hosts[h.Src] || !hosts[h.Dst] || len(h.Points) == 0 || !keep(h) {
			continue
		}
		ids[k] = len(hists)
		hists = append(hists, h.json())
	}
	return hists, ids
}

// rows are test t's matrix of srcs × dsts, every half-cell judged and
// counted.
func (g Grid) rows(t Test, srcs, dsts []string, cells map[cellKey]Cell, histIDs map[PairKey]int, counts map[Colour]int) []rowView {
	var out []rowView
	for _, src := range srcs {
		row := rowView{Host: src}
		for _, dst := range dsts {
			cv := cellView{Src: src, Dst: dst, Self: src == dst, History: -1}
			if id, ok := histIDs[PairKey{src, dst, t.Name}]; ok {
				cv.History = id
			}
			if !cv.Self {
				for _, d := range t.directions() {
					c := g.cellAt(cells, src, dst, t.Name, d)
					verdict := g.judge(c, t)
					counts[verdict.Colour]++
					cv.Halves = append(cv.Halves, halfView{Direction: d, Colour: verdict.Colour,
						Label: shortLabel(c, verdict), Title: tooltip(c, t, verdict)})
				}
			}
			row.Cells = append(row.Cells, cv)
		}
		out = append(out, row)
	}
	return out
}

type view struct {
	Title, Generated string
	RefreshSeconds   int
	Hosts            []string
	// Summarised pages draw group × group summaries; HostGroups is then
	// each host's group, for the search box.
	Summarised bool
	GroupCount int
	HostGroups []hostGroup
	Tests      []testView
	Histories  template.JS
	UPlotJS    template.JS
	UPlotCSS   template.CSS
	License    string
}

type testView struct {
	Test
	Anchor  string
	Index   int
	Legend  string
	Columns []string
	Rows    []rowView
	Counts  map[Colour]int
	Summary []string
	// Summary2 is the group × group matrix of a summarised page.
	Summary2 *summaryView
}

type hostGroup struct{ Host, Group string }

type rowView struct {
	Host  string
	Cells []cellView
}

type cellView struct {
	Src, Dst string
	Self     bool
	History  int
	Halves   []halfView
}

type halfView struct {
	Direction Direction
	Colour    Colour
	Label     string
	Title     string
}

// judge is Judge, but for a pair nothing schedules: not measured,
// whatever an old task left in the archive.
func (g Grid) judge(c Cell, t Test) Verdict {
	if g.Scheduled != nil && !g.Scheduled[PairKey{c.Src, c.Dst, t.Name}] {
		return notScheduled
	}
	return Judge(c, t, g.Generated)
}

// colourWords is a colour as the page's counts say it.
func colourWords(c Colour) string {
	if c == Unmeasured {
		return "not measured"
	}
	return string(c)
}

// legend says the test's thresholds in words.
func legend(t Test) string {
	th := t.Thresholds
	var parts []string
	pair := func(what, dir, amber, red string) {
		switch {
		case amber != "" && red != "":
			parts = append(parts, fmt.Sprintf("%s amber %s %s, red %s %s", what, dir, amber, dir, red))
		case amber != "":
			parts = append(parts, fmt.Sprintf("%s amber %s %s", what, dir, amber))
		case red != "":
			parts = append(parts, fmt.Sprintf("%s red %s %s", what, dir, red))
		}
	}
	str := func(ok bool, s string) string {
		if ok {
			return s
		}
		return ""
	}
	pair("goodput", "below", str(th.GoodputAmberBps > 0, rate(th.GoodputAmberBps)), str(th.GoodputRedBps > 0, rate(th.GoodputRedBps)))
	pair("loss", "above", str(th.LossAmberPercent > 0, percent(th.LossAmberPercent)), str(th.LossRedPercent > 0, percent(th.LossRedPercent)))
	pair("RTT p99 (a TCP test's mean RTT)", "above", str(th.RTTp99Amber > 0, ms(th.RTTp99Amber)), str(th.RTTp99Red > 0, ms(th.RTTp99Red)))
	parts = append(parts, "a failed run red, a missed or aborted one amber")
	if t.Interval > 0 {
		stale := th.StaleIntervals
		if stale <= 0 {
			stale = DefaultStaleIntervals
		}
		parts = append(parts, fmt.Sprintf("grey after %d intervals of %s without a result", stale, units.DurationString(t.Interval)))
	}
	return strings.Join(parts, "; ") + "."
}

// shortLabel is what a half-cell says in its box: the goodput, else the
// RTT p99 and loss, or the state of a run that did not finish.
func shortLabel(c Cell, v Verdict) string {
	switch {
	case v.Colour == Unmeasured && len(v.Reasons) > 0 && v.Reasons[0] == notScheduled.Reasons[0]:
		return "not scheduled"
	case c.At.IsZero():
		return "–"
	case c.State != "finished":
		return c.State
	case measured(c.GoodputBps):
		return compactRate(c.GoodputBps)
	}
	// A latency test: its RTT, and its loss when there was any.
	var parts []string
	if rtt, _ := judgedRTT(c.Figures); rtt > 0 {
		parts = append(parts, ms(rtt))
	}
	if measured(c.LostPercent) && (c.LostPercent > 0 || len(parts) == 0) {
		parts = append(parts, percent(c.LostPercent)+" loss")
	}
	if len(parts) == 0 {
		return string(v.Colour)
	}
	return strings.Join(parts, " ")
}

// compactRate fits a rate in a cell: "941M", "9.4G".
func compactRate(bps float64) string {
	s := rate(bps) // "941 Mbits/sec"
	num, unit, _ := strings.Cut(s, " ")
	if p := strings.TrimSuffix(unit, "bits/sec"); p != unit {
		return num + p
	}
	return s
}

// tooltip is a half-cell's last values, one per line.
func tooltip(c Cell, t Test, v Verdict) string {
	arrow := "→"
	if c.Direction == Reverse {
		arrow = "←"
	}
	lines := []string{fmt.Sprintf("%s %s %s, %s (%s)", c.Src, arrow, c.Dst, t.Name, c.Direction),
		string(v.Colour) + ": " + strings.Join(v.Reasons, "; ")}
	if !c.At.IsZero() {
		l := "last run " + fmtTime(c.At) + ": " + orUnknown(c.State)
		if c.Reason != "" {
			l += " (" + c.Reason + ")"
		}
		lines = append(lines, l)
	}
	if measured(c.GoodputBps) {
		lines = append(lines, "goodput "+rate(c.GoodputBps))
	}
	if measured(c.LostPercent) {
		lines = append(lines, "loss "+percent(c.LostPercent))
	}
	if c.RTTp50 > 0 || c.RTTp99 > 0 {
		lines = append(lines, fmt.Sprintf("RTT p50 %s, p99 %s", ms(c.RTTp50), ms(c.RTTp99)))
	}
	if c.RTTMean > 0 {
		l := "RTT mean " + ms(c.RTTMean) + " (TCP's smoothed RTT, no percentiles"
		if t.Thresholds.RTTp99Amber > 0 || t.Thresholds.RTTp99Red > 0 {
			l += "; the RTT thresholds judge it"
		}
		lines = append(lines, l+")")
	}
	if !c.LastSuccess.IsZero() {
		lines = append(lines, "last success "+fmtTime(c.LastSuccess))
	} else if !c.At.IsZero() {
		lines = append(lines, "no success on record")
	}
	return strings.Join(lines, "\n")
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// historyJSON is a pair's history as the page's script draws it: uPlot's
// layout, unix seconds first, one array per series, null for no value.
type historyJSON struct {
	Title  string      `json:"title"`
	X      []float64   `json:"x"`
	Charts []chartJSON `json:"charts"`
	Events []eventJSON `json:"events"`
	Routes []routeJSON `json:"routes"`
}

// routeJSON is a route change: T in unix seconds for the marker, At for
// the list below the charts.
type routeJSON struct {
	T    float64 `json:"t"`
	At   string  `json:"at"`
	Dir  string  `json:"dir"`
	From string  `json:"from"`
	To   string  `json:"to"`
}

type chartJSON struct {
	Title  string       `json:"title"`
	Unit   string       `json:"unit"`
	Names  []string     `json:"names"`
	Series [][]*float64 `json:"series"`
}

type eventJSON struct {
	At    string `json:"at"`
	Dir   string `json:"dir"`
	State string `json:"state"`
	Why   string `json:"why"`
}

func (h History) json() historyJSON {
	pts := slices.Clone(h.Points)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].At.Before(pts[j].At) })
	out := historyJSON{Title: fmt.Sprintf("%s ⇄ %s, %s", h.Src, h.Dst, h.Test), Events: []eventJSON{}, Routes: []routeJSON{}}
	routes := slices.Clone(h.RouteChanges)
	sort.SliceStable(routes, func(i, j int) bool { return routes[i].At.Before(routes[j].At) })
	for _, r := range routes {
		out.Routes = append(out.Routes, routeJSON{T: float64(r.At.UnixNano()) / 1e9, At: fmtTime(r.At), Dir: string(dirOr(r.Direction)),
			From: strings.Join(r.From, " "), To: strings.Join(r.To, " ")})
	}
	index := map[int64]int{}
	for _, p := range pts {
		ns := p.At.UnixNano()
		if _, ok := index[ns]; !ok {
			index[ns] = len(out.X)
			out.X = append(out.X, float64(ns)/1e9)
		}
		if p.State != "" && p.State != "finished" {
			out.Events = append(out.Events, eventJSON{At: fmtTime(p.At), Dir: string(dirOr(p.Direction)), State: p.State, Why: p.Reason})
		}
	}
	type metric struct {
		name string
		get  func(Point) (float64, bool)
	}
	charts := []struct {
		title, unit string
		metrics     []metric
	}{
		{"Goodput", "Mbit/s", []metric{{"goodput", func(p Point) (float64, bool) { return p.GoodputBps / 1e6, measured(p.GoodputBps) }}}},
		{"Round-trip time", "ms", []metric{
			{"p50", func(p Point) (float64, bool) { return float64(p.RTTp50) / 1e6, p.RTTp50 > 0 }},
			{"p99", func(p Point) (float64, bool) { return float64(p.RTTp99) / 1e6, p.RTTp99 > 0 }},
			{"mean", func(p Point) (float64, bool) { return float64(p.RTTMean) / 1e6, p.RTTMean > 0 }}}},
		{"Loss", "%", []metric{{"loss", func(p Point) (float64, bool) { return p.LostPercent, measured(p.LostPercent) }}}},
	}
	for _, c := range charts {
		cj := chartJSON{Title: c.title, Unit: c.unit}
		for _, m := range c.metrics {
			for _, d := range []Direction{Forward, Reverse} {
				ys := make([]*float64, len(out.X))
				some := false
				for _, p := range pts {
					if dirOr(p.Direction) != d || (p.State != "" && p.State != "finished") {
						continue
					}
					if y, ok := m.get(p); ok {
						ys[index[p.At.UnixNano()]] = &y
						some = true
					}
				}
				if some {
					cj.Names = append(cj.Names, m.name+" "+string(d))
					cj.Series = append(cj.Series, ys)
				}
			}
		}
		if len(cj.Series) > 0 {
			out.Charts = append(out.Charts, cj)
		}
	}
	return out
}

func dirOr(d Direction) Direction {
	if d == "" {
		return Forward
	}
	return d
}

var (
	page      = template.Must(template.Must(template.New("grid").Parse(pageHTML)).Parse(matrixHTML))
	blockPage = template.Must(template.Must(template.New("block").Parse(blockHTML)).Parse(matrixHTML))
)
