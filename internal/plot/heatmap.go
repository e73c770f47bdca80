package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HeatmapInput is a summary value over two axes of a campaign: goodput
// over windows × streams.
type HeatmapInput struct {
	Title   string
	X, Y    Axis
	Value   Axis // what the cells hold; only its Label and Quantity count
	XValues []float64
	YValues []float64
	// XLabels and YLabels, when given, name the values on the axes (an
	// axis of words such as congestion controls); else the values are
	// printed in their axis's unit.
	XLabels, YLabels []string
	// Cells[j][i] is the value at (XValues[i], YValues[j]); NaN where the
	// campaign has no result.
	Cells  [][]float64
	Footer Footer
}

// Heatmap draws one coloured cell per (x, y), labelled with its value.
// The axes are the campaign's values in order, evenly spaced.
func Heatmap(in HeatmapInput) (*Figure, error) {
	nx, ny := len(in.XValues), len(in.YValues)
	if nx == 0 || ny == 0 {
		return nil, errors.New("heatmap: no cells to draw")
	}
	if len(in.Cells) != ny {
		return nil, fmt.Errorf("heatmap: %d rows of cells for %d y values", len(in.Cells), ny)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, row := range in.Cells {
		if len(row) != nx {
			return nil, fmt.Errorf("heatmap: row %d has %d cells for %d x values", j, len(row), nx)
		}
		for _, v := range row {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	f := &Figure{Kind: "heatmap", Title: in.Title, Footer: in.Footer}
	p := gplot.New()
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = 8
	p.X.Label.TextStyle.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	p.X.Tick.Label.Font.Size = 8
	p.Y.Tick.Label.Font.Size = 8
	panel := &Panel{Plot: p}
	f.Panels = append(f.Panels, panel)

	unit, div := linearUnit(in.Value.Quantity, math.Max(math.Abs(lo), math.Abs(hi)))
	g := heatGrid{in.Cells}
	pal := moreland.SmoothBlueRed().Palette(64)
	var labels plotter.XYLabels
	var labelColors []color.Color
	if !math.IsInf(lo, 0) {
		hm := plotter.NewHeatMap(g, pal)
		hm.Min, hm.Max = lo, hi
		if lo == hi {
			hm.Min, hm.Max = lo-1, hi+1
		}
		hm.NaN = color.Gray{Y: 0xdd}
		p.Add(hm)
		for _, th := range []struct {
			name string
			v    float64
		}{{"low", lo}, {"high", hi}} {
			c := pal.Colors()[paletteIndex(th.v, hm.Min, hm.Max, len(pal.Colors()))]
			p.Legend.Add(fmt.Sprintf("%s: %s %s", th.name, threeSignificant(th.v/div), unit), swatch{c})
		}
	}
	for j, row := range in.Cells {
		s := Series{Name: tickLabel(in.Y.Quantity, in.YValues[j])}
		if j < len(in.YLabels) {
			s.Name = in.YLabels[j]
		}
		for i, v := range row {
			s.Points = append(s.Points, Point{X: in.XValues[i], Y: v})
			text := "—"
			clr := color.Color(color.Black)
			if !math.IsNaN(v) {
				text = threeSignificant(v / div)
				if hi > lo {
					c := pal.Colors()[paletteIndex(v, lo, hi, len(pal.Colors()))]
					clr = readableOn(c)
				}
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: float64(j)})
			labels.Labels = append(labels.Labels, text)
			labelColors = append(labelColors, clr)
		}
		panel.Series = append(panel.Series, s)
	}
	if l, err := plotter.NewLabels(labels); err == nil {
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Size = 9
			l.TextStyle[i].XAlign = draw.XCenter
			l.TextStyle[i].YAlign = draw.YCenter
			l.TextStyle[i].Color = labelColors[i]
		}
		p.Add(l)
	}
	p.X.Label.Text, p.Y.Label.Text = in.X.Label, in.Y.Label
	p.X.Tick.Marker, p.Y.Tick.Marker = indexTicks(in.X.Quantity, in.XValues, in.XLabels), indexTicks(in.Y.Quantity, in.YValues, in.YLabels)
	p.X.Min, p.X.Max = -0.5, float64(nx)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(ny)-0.5
	p.Title.Text = axisLabel("Cells: "+in.Value.Label, unit)
	p.Title.TextStyle.Font.Size = 9
	return f, nil
}

// heatGrid puts cell (i, j) at (i, j): the axes are ordinal.
type heatGrid struct{ cells [][]float64 }

func (g heatGrid) Dims() (c, r int)   { return len(g.cells[0]), len(g.cells) }
func (g heatGrid) Z(c, r int) float64 { return g.cells[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// indexTicks labels positions 0..n-1 with the axis's labels, or its
// values.
func indexTicks(q Quantity, values []float64, labels []string) gplot.ConstantTicks {
	ticks := make(gplot.ConstantTicks, len(values))
	for i, v := range values {
		label := tickLabel(q, v)
		if i < len(labels) {
			label = labels[i]
		}
		ticks[i] = gplot.Tick{Value: float64(i), Label: label}
	}
	return ticks
}

func paletteIndex(v, lo, hi float64, n int) int {
	if hi <= lo {
		return n / 2
	}
	i := int((v - lo) / (hi - lo) * float64(n-1))
	return max(0, min(n-1, i))
}

// readableOn is black or white, whichever reads on background c.
func readableOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	lum := 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)
	if lum < 0x8000 {
		return color.White
	}
	return color.Black
}

// threeSignificant prints v with about three significant figures.
func threeSignificant(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// swatch is a legend thumbnail filled with one colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, c.ClipPolygonXY([]vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	}))
}
