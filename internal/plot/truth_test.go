package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
)

// Axis truth: the values are read back from the rendered SVG's geometry
// (each series' path, mapped back through the grid lines at the
// labelled ticks) and checked against the input, so a figure cannot
// quietly differ from its data.

type svgPath struct {
	pts    [][2]float64
	stroke string
	width  float64
}

var (
	pathRE   = regexp.MustCompile(`<path d="([^"]*)" style="([^"]*)"`)
	strokeRE = regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`)
	widthRE  = regexp.MustCompile(`stroke-width:([0-9.]+)`)
	textRE   = regexp.MustCompile(`<text x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*>([^<]*)</text>`)
)

func parseSVGPaths(svg string) []svgPath {
	var out []svgPath
	for _, m := range pathRE.FindAllStringSubmatch(svg, -1) {
		p := svgPath{}
		if s := strokeRE.FindStringSubmatch(m[2]); s != nil {
			p.stroke = strings.ToUpper(s[1])
		}
		if w := widthRE.FindStringSubmatch(m[2]); w != nil {
			p.width, _ = strconv.ParseFloat(w[1], 64)
		}
		for _, seg := range regexp.MustCompile(`[ML]([-0-9.e]+),([-0-9.e]+)`).FindAllStringSubmatch(m[1], -1) {
			x, _ := strconv.ParseFloat(seg[1], 64)
			y, _ := strconv.ParseFloat(seg[2], 64)
			p.pts = append(p.pts, [2]float64{x, y})
		}
		out = append(out, p)
	}
	return out
}

func hexOf(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// axisMap maps an SVG coordinate back to a data value from two grid
// lines at known tick values.
type axisMap struct {
	pos0, pos1, v0, v1 float64
	log                bool
}

func (m axisMap) value(pos float64) float64 {
	f := (pos - m.pos0) / (m.pos1 - m.pos0)
	if m.log {
		return math.Pow(10, math.Log10(m.v0)+f*(math.Log10(m.v1)-math.Log10(m.v0)))
	}
	return m.v0 + f*(m.v1-m.v0)
}

// gridMaps reads a one-panel figure's grid lines (gonum draws them at the
// labelled ticks) and pairs them with the ticks' values.
func gridMaps(t *testing.T, paths []svgPath, p *Panel) (xm, ym axisMap) {
	t.Helper()
	var vx, hy []float64
	for _, pa := range paths {
		if pa.stroke != "#808080" || len(pa.pts) != 2 {
			continue
		}
		if pa.pts[0][0] == pa.pts[1][0] {
			vx = append(vx, pa.pts[0][0])
		} else if pa.pts[0][1] == pa.pts[1][1] {
			hy = append(hy, pa.pts[0][1])
		}
	}
	sort.Float64s(vx)
	sort.Float64s(hy)
	major := func(a gplot.Axis) []float64 {
		var vs []float64
		for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
			if tk.Label != "" && tk.Value >= a.Min && tk.Value <= a.Max {
				vs = append(vs, tk.Value)
			}
		}
		sort.Float64s(vs)
		return vs
	}
	xt, yt := major(p.Plot.X), major(p.Plot.Y)
	if len(vx) != len(xt) || len(hy) != len(yt) || len(xt) < 2 || len(yt) < 2 {
		t.Fatalf("grid lines %d×%d do not match the labelled ticks %d×%d", len(vx), len(hy), len(xt), len(yt))
	}
	xm = axisMap{vx[0], vx[len(vx)-1], xt[0], xt[len(xt)-1], p.XLog}
	ym = axisMap{hy[0], hy[len(hy)-1], yt[0], yt[len(yt)-1], p.YLog}
	return xm, ym
}

// seriesPath is the longest path drawn in the colour and width of
// series i's line.
func seriesPath(paths []svgPath, i int) *svgPath {
	var best *svgPath
	want := hexOf(plotutil.Color(i))
	for k := range paths {
		p := &paths[k]
		if p.stroke == want && math.Abs(p.width-1.4) < 0.01 && (best == nil || len(p.pts) > len(best.pts)) {
			best = p
		}
	}
	return best
}

func renderSVG(t *testing.T, f *Figure) string {
	t.Helper()
	var buf bytes.Buffer
	if err := f.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-9)
}

// TestSweepSVGTruth: the lines in the SVG, mapped back through the log
// axes, are the means of the input's repetitions at the input's x.
func TestSweepSVGTruth(t *testing.T) {
	in := sweepFixture()
	f, err := Sweep(in)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Panels[0].XLog || !f.Panels[0].YLog {
		t.Fatalf("windows 16K..16M and rates 2M..900M span decades: want log x and y, got %v %v", f.Panels[0].XLog, f.Panels[0].YLog)
	}
	paths := parseSVGPaths(renderSVG(t, f))
	xm, ym := gridMaps(t, paths, f.Panels[0])
	for i, s := range in.Series {
		p := seriesPath(paths, i)
		if p == nil || len(p.pts) != len(s.Points) {
			t.Fatalf("series %q: no path of %d points in the SVG", s.Name, len(s.Points))
		}
		for k, sp := range s.Points {
			var sum float64
			for _, v := range sp.Values {
				sum += v
			}
			wantY := sum / float64(len(sp.Values))
			gotX, gotY := xm.value(p.pts[k][0]), ym.value(p.pts[k][1])
			// The SVG keeps 5 significant figures of each coordinate.
			if !near(gotX, sp.X, 0.01) || !near(gotY, wantY, 0.01) {
				t.Errorf("series %q point %d: SVG reads (%g, %g), the input is (%g, %g)", s.Name, k, gotX, gotY, sp.X, wantY)
			}
		}
	}
}

// TestTimelineSVGTruth: the goodput line read back through the linear
// axes is the input's.
func TestTimelineSVGTruth(t *testing.T) {
	in := timelineFixture()
	in.Cwnd, in.RTT, in.Retransmits = nil, nil, nil // one panel: its grid alone in the SVG
	f, err := Timeline(in)
	if err != nil {
		t.Fatal(err)
	}
	paths := parseSVGPaths(renderSVG(t, f))
	xm, ym := gridMaps(t, paths, f.Panels[0])
	want := in.Goodput[0].Points
	p := seriesPath(paths, 0)
	if p == nil || len(p.pts) != len(want) {
		t.Fatalf("no goodput path of %d points in the SVG", len(want))
	}
	for k, w := range want {
		gotX, gotY := xm.value(p.pts[k][0]), ym.value(p.pts[k][1])
		if math.Abs(gotX-w.X) > 0.01 || !near(gotY, w.Y, 0.005) {
			t.Errorf("point %d: SVG reads (%g, %g), the input is (%g, %g)", k, gotX, gotY, w.X, w.Y)
		}
	}
}

// TestHeatmapSVGTruth: every cell's label in the SVG is its input value
// in the unit the figure names.
func TestHeatmapSVGTruth(t *testing.T) {
	in := heatmapFixture()
	f, err := Heatmap(in)
	if err != nil {
		t.Fatal(err)
	}
	svg := renderSVG(t, f)
	if !strings.Contains(svg, "Cells: Goodput (Mbits/sec)") {
		t.Fatal("the SVG does not name the cells' unit as Mbits/sec")
	}
	texts := map[string]int{}
	for _, m := range textRE.FindAllStringSubmatch(svg, -1) {
		texts[strings.TrimSpace(m[3])]++
	}
	want := map[string]int{}
	for _, row := range in.Cells {
		for _, v := range row {
			if math.IsNaN(v) {
				want["—"]++
				continue
			}
			want[strconv.FormatFloat(v/1e6, 'f', -1, 64)]++
		}
	}
	for label, n := range want {
		found := 0
		for text, m := range texts {
			if text == label {
				found += m
				continue
			}
			// Three significant figures of the exact value.
			if v, err := strconv.ParseFloat(text, 64); err == nil {
				if exact, err := strconv.ParseFloat(label, 64); err == nil && near(v, exact, 0.005) {
					found += m
				}
			}
		}
		if found < n {
			t.Errorf("cell value %s: %d label(s) in the SVG, want %d", label, found, n)
		}
	}
}

// TestPlottedValuesKept: each figure keeps what it drew, equal to its
// input.
func TestPlottedValuesKept(t *testing.T) {
	in := udpmonFixture()
	f, err := UDPMon(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range in.Series {
		got := f.Panels[0].Find(s.Name)
		loss := f.Panels[1].Find(s.Name + " loss")
		if got == nil || loss == nil || len(got.Points) != len(s.Points) || len(loss.Points) != len(s.Points) {
			t.Fatalf("%s: plotted series missing or short", s.Name)
		}
		for i, p := range s.Points {
			if got.Points[i] != (Point{p.SpacingUs, p.BitsPerSecond}) || loss.Points[i] != (Point{p.SpacingUs, p.LossPercent}) {
				t.Errorf("%s point %d: plotted %v / %v, input %+v", s.Name, i, got.Points[i], loss.Points[i], p)
			}
		}
		curve := f.Panels[0].Find(s.Name + ": size ÷ spacing")
		if curve == nil || len(curve.Points) == 0 {
			t.Fatalf("%s: no 1/t curve", s.Name)
		}
		for _, c := range curve.Points {
			if !near(c.Y, s.DatagramBits/(c.X/1e6), 1e-9) {
				t.Errorf("%s: the curve has %g at %g µs, want %g", s.Name, c.Y, c.X, s.DatagramBits/(c.X/1e6))
			}
		}
	}
	lat := latencyFixture()
	lf, err := Latency(lat)
	if err != nil {
		t.Fatal(err)
	}
	cdf := lf.Panels[1].Find("64 B")
	if cdf == nil || math.Abs(cdf.Points[len(cdf.Points)-1].Y-100) > 1e-9 {
		t.Fatalf("the CDF must end at 100%%: %v", cdf)
	}
	marks := lf.Panels[0].Find("64 B percentiles")
	if marks == nil || len(marks.Points) != 3 || marks.Points[0].X != 300 || marks.Points[1].X != 1050 || marks.Points[2].X != 9000 {
		t.Fatalf("percentile marks: %v, want p50 300, p99 1050, p99.9 9000", marks)
	}
}

// TestRebinKeepsEverySample: the histogram's display bins hold exactly
// the samples of the buckets, ten bins per decade on a log axis.
func TestRebinKeepsEverySample(t *testing.T) {
	var buckets []Bucket
	var total int64
	for v := 50.0; v < 30000; v += 1 + v/100 {
		n := int64(v) % 7
		buckets = append(buckets, Bucket{From: v, To: v + 1, Count: n})
		total += n
	}
	for _, logX := range []bool{true, false} {
		bins := rebin(buckets, logX)
		var sum int64
		for i, b := range bins {
			sum += b.Count
			if logX && !near(b.To/b.From, math.Pow(10, 0.1), 1e-9) {
				t.Fatalf("log bin %d spans %g..%g, want a tenth of a decade", i, b.From, b.To)
			}
			if i > 0 && b.From < bins[i-1].To-1e-9 {
				t.Fatalf("bins overlap: %v then %v", bins[i-1], b)
			}
		}
		if sum != total || len(bins) >= len(buckets) {
			t.Fatalf("log=%v: %d bins hold %d samples; the %d buckets hold %d", logX, len(bins), sum, len(buckets), total)
		}
	}
}

// TestUDPMonSVGTruth: each size's rate line in the top panel, read back
// through the axes, is the input's rate at the input's spacing.
func TestUDPMonSVGTruth(t *testing.T) {
	in := udpmonFixture()
	f, err := UDPMon(in)
	if err != nil {
		t.Fatal(err)
	}
	top := f.Panels[0]
	f.Panels = f.Panels[:1] // one panel: its grid lines alone, its x ticks labelled again
	if u, ok := top.Plot.X.Tick.Marker.(unlabelled); ok {
		top.Plot.X.Tick.Marker = u.Ticker
	}
	paths := parseSVGPaths(renderSVG(t, f))
	xm, ym := gridMaps(t, paths, top)
	for i, s := range in.Series {
		var pts []UDPMonPoint
		for _, p := range s.Points {
			if (!top.XLog || p.SpacingUs > 0) && (!top.YLog || p.BitsPerSecond > 0) {
				pts = append(pts, p)
			}
		}
		// The size's rate line: its colour and width, one vertex a point
		// (its 1/t curve shares the colour with many more vertices).
		var line *svgPath
		want := hexOf(plotutil.Color(i))
		for k := range paths {
			if p := &paths[k]; p.stroke == want && math.Abs(p.width-1.4) < 0.01 && len(p.pts) == len(pts) {
				line = p
			}
		}
		if line == nil {
			t.Fatalf("series %q: no path of %d points in the SVG", s.Name, len(pts))
		}
		for k, sp := range pts {
			gotX, gotY := xm.value(line.pts[k][0]), ym.value(line.pts[k][1])
			if !near(gotX, sp.SpacingUs, 0.01) || !near(gotY, sp.BitsPerSecond, 0.01) {
				t.Errorf("series %q point %d: SVG reads (%g µs, %g bit/s), the input is (%g, %g)", s.Name, k, gotX, gotY, sp.SpacingUs, sp.BitsPerSecond)
			}
		}
	}
}
