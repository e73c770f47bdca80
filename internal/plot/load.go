package plot

import (
	"errors"
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LoadInput is latency under load (rr --load): the probes' RTT over the
// idle, loaded and after phases, and any RTT measured over time (the
// load's own TCP_INFO RTT, say).
type LoadInput struct {
	Title  string
	Phases []LoadPhase
	RTT    []TimeSeries // ms over seconds since the test start
	Footer Footer
}

// LoadPhase is one phase with its probes' RTT percentiles, in ms (0:
// unknown).
type LoadPhase struct {
	Label      string // idle, loaded, after
	Start, End float64
	P50, P99   float64
}

// phaseShade is the background of each phase, by label; others are grey.
var phaseShade = map[string]color.Color{
	"idle":   color.NRGBA{R: 0x4c, G: 0xaf, B: 0x50, A: 0x28},
	"loaded": color.NRGBA{R: 0xf4, G: 0x43, B: 0x36, A: 0x28},
	"after":  color.NRGBA{R: 0x21, G: 0x96, B: 0xf3, A: 0x28},
}

// Load draws RTT over time with each phase shaded, its probes' p50 and
// p99 drawn across the phase.
func Load(in LoadInput) (*Figure, error) {
	if len(in.Phases) == 0 && !hasPoints(in.RTT) {
		return nil, errors.New("load: no phases or RTT samples to draw")
	}
	f := &Figure{Kind: "load", Title: in.Title, Footer: in.Footer}
	var p50, p99 []Point
	for _, ph := range in.Phases {
		if ph.P50 != 0 {
			p50 = append(p50, Point{ph.Start, ph.P50}, Point{ph.End, ph.P50})
		}
		if ph.P99 != 0 {
			p99 = append(p99, Point{ph.Start, ph.P99}, Point{ph.End, ph.P99})
		}
	}
	lists := [][]Point{p50, p99}
	for _, s := range in.RTT {
		lists = append(lists, s.Points)
	}
	allX, allY := allPoints(lists...)
	for _, ph := range in.Phases {
		allX = append(allX, ph.Start, ph.End)
	}
	b := f.newPanel(Axis{Label: "Time", Quantity: Seconds, Scale: Linear}, Axis{Label: "RTT", Quantity: Millis}, allX, allY)
	b.panel.Plot.Add(phaseBands(in.Phases))
	for _, ph := range in.Phases {
		b.extend([]float64{ph.Start, ph.End}, nil)
	}
	st := draw.LineStyle{Color: color.Black, Width: vg.Points(2)}
	b.segments("probes p50", p50, st)
	b.segments("probes p99", p99, dashed(st))
	// Several streams of one load share one legend entry: their lines
	// tell apart, their names would crowd the figure.
	b.quiet = len(in.RTT) > 2
	for i, s := range in.RTT {
		b.line(s.Name, s.Points, lineStyle(i+1), false)
	}
	if b.quiet {
		b.quiet = false
		if l, err := plotter.NewLine(plotter.XYs{{}}); err == nil {
			l.LineStyle = lineStyle(1)
			b.legend(fmt.Sprintf("the load's %d streams' own RTT", len(in.RTT)), l)
		}
	}
	b.finish()
	f.note("Shaded: the phases. Black: the request-response probes' RTT percentiles over each phase.")
	return f, nil
}

// segments draws pairs of points as separate level segments, one per
// phase. Both ends of a pair share their y, so a log axis keeps or drops
// them together.
func (b *panelBuilder) segments(name string, pts []Point, st draw.LineStyle) {
	kept := b.keep(name, pts)
	for i := 0; i+1 < len(kept); i += 2 {
		l, err := plotter.NewLine(xys(kept[i : i+2]))
		if err != nil {
			continue
		}
		l.LineStyle = st
		b.panel.Plot.Add(l)
		b.legend(name, l)
	}
}

// phaseBands shades each phase over the panel's height and names it.
type phaseBands []LoadPhase

func (pb phaseBands) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := text.Style{
		Color:   color.Gray{Y: 0x40},
		Font:    p.X.Tick.Label.Font,
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: p.TextHandler,
	}
	sty.Font.Size = 8
	for _, ph := range pb {
		shade, ok := phaseShade[ph.Label]
		if !ok {
			shade = color.NRGBA{A: 0x18}
		}
		x0, x1 := trX(ph.Start), trX(ph.End)
		c.FillPolygon(shade, c.ClipPolygonXY([]vg.Point{
			{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y},
		}))
		// Named at the bottom left: the legend takes a top corner, and
		// the RTT axis starts at 0, below any probe.
		c.FillText(sty, vg.Point{X: x0 + 3, Y: c.Min.Y + 3}, ph.Label)
	}
}
