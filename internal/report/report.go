// Package report renders a campaign's (or a run's) results as one
// self-contained HTML page: tables and static figures that work without
// JavaScript, and interactive charts drawn by uPlot from JSON data inlined
// in the page. Nothing in the page refers to any host; the only other files
// it uses are the static figures beside it.
package report

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
	"math"
	"time"

	"github.com/wireperf/wireperf/internal/palette"
)

// uPlot 1.6.32 (MIT, see assets/LICENSE), inlined into every page.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/LICENSE
	uplotLicense string
)

// UPlot is the embedded uPlot script, stylesheet and licence text, for
// another self-contained page that draws its charts the way reports do.
func UPlot() (js template.JS, css template.CSS, license string) {
	return template.JS(uplotJS), template.CSS(uplotCSS), uplotLicense
}

// Page is everything one report shows.
type Page struct {
	Title     string
	Generated time.Time
	Version   string
	// Empty, when set, is said instead of sections: nothing to report.
	Empty    string
	Sections []Section
}

// Section is one campaign, or one run outside a campaign.
type Section struct {
	Name       string
	Spec       string
	SpecFormat string
	Created    time.Time
	// Empty, when set, is said instead of table, figures and runs.
	Empty string
	// Verdicts are those of the advise reports stored with the section's
	// runs (wireperf advise --save), one line each.
	Verdicts []string
	Hosts    []Host
	Table    *Table
	// CPU are grids like Table's of each end's process CPU.
	CPU     []Table
	Figures []Figure
	Charts  []Chart
	Runs    []Run
}

// Host is one host's identity and kernel limits.
type Host struct {
	Role, Hostname, Kernel string
	Limits                 []KV
}

// KV is one named value, shown as a table row.
type KV struct{ Key, Value string }

// Table is a grid of cells as they are printed; the first row is the
// header and the first column names the rows.
type Table struct {
	Caption string
	Grid    [][]string
}

// Figure is a static image file in the page's directory (an SVG), and
// the same figure as a PNG where one was written; both are offered as
// downloads.
type Figure struct {
	File, Alt, Caption string
	PNG                string
}

// Chart is one interactive chart: series of Y over shared X values. A NaN
// Y is a gap.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	LogX   bool
	// XUnit is how x values read: "bytes" (64K, 1M, powers of two),
	// "seconds", or "" for plain numbers.
	XUnit  string
	X      []float64
	Series []Series
	// Figure, when set, is the same figure drawn statically: shown in the
	// chart's place without JavaScript (and in print), offered as a
	// download beside the chart otherwise.
	Figure *Figure
}

// Series is one line of a chart.
type Series struct {
	Name string
	Y    []float64
}

// Run is one run's detail section.
type Run struct {
	ID, State, Error, Cmdline string
	Started                   time.Time
	Axes, Summary             []KV
	Verdicts                  []string
	Figures                   []Figure
	Chart                     *Chart
	// HostCharts are the hosts' own use over the run (CPU, memory), after
	// Chart.
	HostCharts []Chart
}

// chartJSON is a chart as the page's script reads it: uPlot's data layout,
// X first, with null for gaps.
type chartJSON struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	XLabel string       `json:"xlabel"`
	YLabel string       `json:"ylabel"`
	LogX   bool         `json:"logx"`
	XUnit  string       `json:"xunit"`
	Names  []string     `json:"names"`
	Data   [][]*float64 `json:"data"`
}

func (c Chart) json(id string) chartJSON {
	out := chartJSON{ID: id, Title: c.Title, XLabel: c.XLabel, YLabel: c.YLabel, LogX: c.LogX, XUnit: c.XUnit}
	keep := make([]bool, len(c.X))
	var xs []*float64
	for i, x := range c.X {
		// A log axis cannot show 0 or less.
		keep[i] = !math.IsNaN(x) && !math.IsInf(x, 0) && (!c.LogX || x > 0)
		if keep[i] {
			xs = append(xs, ptr(x))
		}
	}
	out.Data = append(out.Data, xs)
	for _, s := range c.Series {
		out.Names = append(out.Names, s.Name)
		var ys []*float64
		for i, y := range s.Y {
			if i >= len(keep) || !keep[i] {
				continue
			}
			if math.IsNaN(y) || math.IsInf(y, 0) {
				ys = append(ys, nil)
			} else {
				ys = append(ys, ptr(y))
			}
		}
		for len(ys) < len(xs) {
			ys = append(ys, nil)
		}
		out.Data = append(out.Data, ys)
	}
	return out
}

func ptr(v float64) *float64 { return &v }

// view is the template's data: the page with its charts given IDs.
type view struct {
	Page
	Sections  []sectionView
	Charts    template.JS
	Colours   template.JS // the series colours, as the static figures draw them
	UPlotJS   template.JS
	UPlotCSS  template.CSS
	License   string
	Generated string
}

type sectionView struct {
	Section
	Charts []chartView
	Runs   []runView
}

// chartView is a chart with its ID in the page's chart data.
type chartView struct {
	Chart
	ID string
}

type runView struct {
	Run
	Chart      *chartView
	HostCharts []chartView
}

// Render writes the page as HTML to w.
func Render(w io.Writer, p Page) error {
	v := view{Page: p, UPlotJS: template.JS(uplotJS), UPlotCSS: template.CSS(uplotCSS), License: uplotLicense}
	if !p.Generated.IsZero() {
		v.Generated = p.Generated.UTC().Format(time.RFC3339)
	}
	var charts []chartJSON
	add := func(c Chart) string {
		id := "chart-" + itoa(len(charts))
		charts = append(charts, c.json(id))
		return id
	}
	for _, s := range p.Sections {
		sv := sectionView{Section: s}
		for _, c := range s.Charts {
			sv.Charts = append(sv.Charts, chartView{Chart: c, ID: add(c)})
		}
		for _, r := range s.Runs {
			rv := runView{Run: r}
			if r.Chart != nil {
				rv.Chart = &chartView{Chart: *r.Chart, ID: add(*r.Chart)}
			}
			for _, c := range r.HostCharts {
				rv.HostCharts = append(rv.HostCharts, chartView{Chart: c, ID: add(c)})
			}
			sv.Runs = append(sv.Runs, rv)
		}
		v.Sections = append(v.Sections, sv)
	}
	if charts == nil {
		charts = []chartJSON{}
	}
	// json.Marshal escapes <, > and &, so the data cannot close its script.
	b, err := json.Marshal(charts)
	if err != nil {
		return err
	}
	v.Charts = template.JS(b)
	if b, err = json.Marshal(palette.Series); err != nil {
		return err
	}
	v.Colours = template.JS(b)
	return page.Execute(w, v)
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{"time": fmtTime}).Parse(pageHTML))
