package plot

import (
	"image/color"
	"strings"

	"github.com/wireperf/wireperf/internal/palette"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// panelBuilder collects one panel's series, leaving out what its axes
// cannot show, then fits the axes to what it kept.
type panelBuilder struct {
	fig        *Figure
	panel      *Panel
	x, y       Axis
	xs, ys     []float64 // kept values, for the axes' ranges
	dropped    int       // points left out of a log axis
	droppedIn  []string  // the series they came from
	legendSeen map[string]bool
	// quiet leaves the lines drawn out of the legend.
	quiet bool
}

// newPanel starts a panel whose axes' scales are chosen over every value
// it will show (allX, allY), so that all of a figure's series agree.
func (f *Figure) newPanel(x, y Axis, allX, allY []float64) *panelBuilder {
	p := gplot.New()
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = 8
	p.Legend.ThumbnailWidth = 0.4 * vg.Inch
	p.Legend.Padding = vg.Points(1.5) // rows apart, dashed thumbnails included
	p.X.Label.TextStyle.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	p.X.Tick.Label.Font.Size = 8
	p.Y.Tick.Label.Font.Size = 8
	p.Add(plotter.NewGrid())
	b := &panelBuilder{
		fig:        f,
		panel:      &Panel{Plot: p, XLog: x.wantsLog(allX), YLog: y.wantsLog(allY)},
		x:          x,
		y:          y,
		legendSeen: map[string]bool{},
	}
	f.Panels = append(f.Panels, b.panel)
	return b
}

// keep filters pts for the panel's axes and records them as series name.
func (b *panelBuilder) keep(name string, pts []Point) []Point {
	pts = finitePoints(pts)
	kept, n := positive(pts, b.panel.XLog, b.panel.YLog)
	if n > 0 {
		b.dropped += n
		b.droppedIn = append(b.droppedIn, name)
	}
	for _, p := range kept {
		b.xs = append(b.xs, p.X)
		b.ys = append(b.ys, p.Y)
	}
	b.panel.Series = append(b.panel.Series, Series{Name: name, Points: kept})
	return kept
}

func xys(pts []Point) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		out[i] = plotter.XY{X: p.X, Y: p.Y}
	}
	return out
}

// lineStyle is series i's look: the shared series colour (the report's
// interactive charts use the same), solid.
func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: palette.Color(i), Width: vg.Points(1.4)}
}

// line draws pts joined, with points marked when marks is set; the
// legend names it once.
func (b *panelBuilder) line(name string, pts []Point, st draw.LineStyle, marks bool) {
	kept := b.keep(name, pts)
	if len(kept) == 0 {
		return
	}
	l, err := plotter.NewLine(xys(kept))
	if err != nil {
		return // unreachable: finite, non-empty points
	}
	l.LineStyle = st
	b.panel.Plot.Add(l)
	var thumb gplot.Thumbnailer = l
	if marks {
		s, err := plotter.NewScatter(xys(kept))
		if err == nil {
			s.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
			b.panel.Plot.Add(s)
			thumb = lineAndPoint{l, s}
		}
	}
	b.legend(name, thumb)
}

// lineAndPoint shows a line with its mark in the legend.
type lineAndPoint struct {
	l *plotter.Line
	s *plotter.Scatter
}

func (lp lineAndPoint) Thumbnail(c *draw.Canvas) { lp.l.Thumbnail(c); lp.s.Thumbnail(c) }

func (b *panelBuilder) legend(name string, t gplot.Thumbnailer) {
	if name == "" || b.legendSeen[name] || b.quiet {
		return
	}
	b.legendSeen[name] = true
	b.panel.Plot.Legend.Add(name, t)
}

// extend makes the axes cover values that are not series (a marker's
// position, a reference curve's range).
func (b *panelBuilder) extend(xs, ys []float64) {
	for _, x := range xs {
		if !b.panel.XLog || x > 0 {
			b.xs = append(b.xs, x)
		}
	}
	for _, y := range ys {
		if !b.panel.YLog || y > 0 {
			b.ys = append(b.ys, y)
		}
	}
}

// finish sets the axes and notes what the log axes left out.
func (b *panelBuilder) finish() *Panel {
	p := b.panel.Plot
	b.x.configure(&p.X, b.xs, b.panel.XLog)
	b.y.configure(&p.Y, b.ys, b.panel.YLog)
	if !b.panel.YLog && !b.y.fixed() {
		p.Y.Max += 0.08 * (p.Y.Max - p.Y.Min) // headroom for the legend and the top points
	}
	b.placeLegend()
	if b.dropped > 0 {
		axes := []string{}
		if b.panel.XLog {
			axes = append(axes, b.x.Label)
		}
		if b.panel.YLog {
			axes = append(axes, b.y.Label)
		}
		b.fig.note("%d point(s) with %s ≤ 0 left out: a log axis cannot show them (%s).",
			b.dropped, strings.Join(axes, " or "), strings.Join(dedupe(b.droppedIn), ", "))
	}
	return b.panel
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// allPoints gathers the coordinates of several point lists.
func allPoints(lists ...[]Point) (xs, ys []float64) {
	for _, l := range lists {
		for _, p := range l {
			xs = append(xs, p.X)
			ys = append(ys, p.Y)
		}
	}
	return xs, ys
}

// linkX gives stacked panels one x range and leaves the x labels to the
// bottom one.
func linkX(panels []*Panel) {
	if len(panels) < 2 {
		return
	}
	lo, hi := panels[0].Plot.X.Min, panels[0].Plot.X.Max
	for _, p := range panels[1:] {
		lo, hi = min(lo, p.Plot.X.Min), max(hi, p.Plot.X.Max)
	}
	for i, p := range panels {
		p.Plot.X.Min, p.Plot.X.Max = lo, hi
		if i < len(panels)-1 {
			p.Plot.X.Label.Text = ""
			p.Plot.X.Tick.Marker = unlabelled{p.Plot.X.Tick.Marker}
		}
	}
}

// unlabelled keeps a ticker's ticks without their labels.
type unlabelled struct{ gplot.Ticker }

func (u unlabelled) Ticks(min, max float64) []gplot.Tick {
	ts := u.Ticker.Ticks(min, max)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// withAlpha is c at the given opacity.
func withAlpha(c color.Color, a uint8) color.Color {
	r, g, bl, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: a}
}

// dashed is st with a dash pattern.
func dashed(st draw.LineStyle) draw.LineStyle {
	st.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	return st
}

// placeLegend puts the legend in the corner of the panel that the data
// cross least (top right when it is a tie).
func (b *panelBuilder) placeLegend() {
	p := b.panel.Plot
	type corner struct{ left, top bool }
	corners := []corner{{false, true}, {true, true}, {false, false}, {true, false}}
	counts := make([]int, len(corners))
	// The corner is as tall as the legend, roughly: a twentieth of the
	// panel per entry.
	tall := min(0.5, max(0.2, 0.1+0.05*float64(len(b.legendSeen))))
	count := func(x, y float64) {
		nx, ny := p.X.Norm(x), p.Y.Norm(y)
		for i, c := range corners {
			inX := (c.left && nx < 0.4) || (!c.left && nx > 0.6)
			inY := (c.top && ny > 1-tall) || (!c.top && ny < tall)
			if inX && inY {
				counts[i]++
			}
		}
	}
	for _, s := range b.panel.Series {
		for i, pt := range s.Points {
			count(pt.X, pt.Y)
			if i == 0 {
				continue
			}
			// Lines cross corners between their points too.
			prev := s.Points[i-1]
			for k := 1; k < 8; k++ {
				f := float64(k) / 8
				count(prev.X+f*(pt.X-prev.X), prev.Y+f*(pt.Y-prev.Y))
			}
		}
	}
	best := 0
	for i := range corners {
		if counts[i] < counts[best] {
			best = i
		}
	}
	p.Legend.Left, p.Legend.Top = corners[best].left, corners[best].top
}
