package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
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
	p.X.Label.TextStyle.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	p.X.Tick.Label.Font.Size = 8
	p.Y.Tick.Label.Font.Size = 8
	panel := &Panel{Plot: p}
	f.Panels = append(f.Panels, panel)

	unit, div := linearUnit(in.Value.Quantity, math.Max(math.Abs(lo), math.Abs(hi)))
	g := heatGrid{in.Cells}
	pal := sequential{}
	var labels plotter.XYLabels
	var labelColors []color.Color
	hasNaN := false
	for _, row := range in.Cells {
		for _, v := range row {
			hasNaN = hasNaN || math.IsNaN(v)
		}
	}
	if !math.IsInf(lo, 0) {
		hm := plotter.NewHeatMap(g, pal)
		hm.Min, hm.Max = lo, hi
		if lo == hi {
			hm.Min, hm.Max = lo-1, hi+1
		}
		hm.NaN = noResult
		p.Add(hm)
		panel.key = &colourKey{
			low:  fmt.Sprintf("%s %s", threeSignificant(lo/div), unit),
			high: fmt.Sprintf("%s %s", threeSignificant(hi/div), unit),
			same: lo == hi,
			nan:  hasNaN,
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
					clr = readableOn(heatColour((v - lo) / (hi - lo)))
				} else {
					clr = readableOn(heatColour(0.5))
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

// noResult is the colour of a cell without a result.
var noResult = color.Gray{Y: 0xdd}

// heatStops is a sequential colour map, light for little and dark for
// much (viridis, from its yellow end to its purple one): a magnitude
// reads by lightness alone, also in grey print and to colour-blind eyes.
var heatStops = []color.RGBA{
	{0xfd, 0xe7, 0x25, 0xff},
	{0x5e, 0xc9, 0x62, 0xff},
	{0x21, 0x91, 0x8c, 0xff},
	{0x3b, 0x52, 0x8b, 0xff},
	{0x44, 0x01, 0x54, 0xff},
}

// heatColour is the map's colour at f in [0, 1], linear between stops.
func heatColour(f float64) color.RGBA {
	f = math.Max(0, math.Min(1, f))
	pos := f * float64(len(heatStops)-1)
	i := min(int(pos), len(heatStops)-2)
	t := pos - float64(i)
	a, b := heatStops[i], heatStops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// sequential is heatColour as the palette gonum's heat map draws with.
type sequential struct{}

// heatLevels is how many colours the heat map picks from.
const heatLevels = 64

func (sequential) Colors() []color.Color {
	out := make([]color.Color, heatLevels)
	for i := range out {
		out[i] = heatColour(float64(i) / (heatLevels - 1))
	}
	return out
}

// colourKey is the heatmap's scale, drawn right of the cells rather than
// over them: a bar from the lowest value's colour (bottom) to the
// highest's (top), each end labelled, and a swatch for cells without a
// result. Every swatch has a dark outline, so that the light end and the
// grey read against the white page.
type colourKey struct {
	low, high string
	same      bool // one value only: the bar is its colour alone
	nan       bool // some cells have no result
	// drawnAt and cellsAt are where the last Draw put the key and the
	// cells, so that tests can check that they do not overlap.
	drawnAt, cellsAt vg.Rectangle
}

const (
	keyGap      = 8 // between the plot and the key
	keyBarWidth = 10
	keyTextGap  = 3
	keyFontSize = 8
)

var keyOutline = draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(0.5)}

func (k *colourKey) labels() []string {
	out := []string{k.low, k.high}
	if k.nan {
		out = append(out, noResultLabel)
	}
	return out
}

const noResultLabel = "no result"

// width is the room the key takes right of the plot.
func (k *colourKey) width() vg.Length {
	st := textStyle(keyFontSize, color.Black, draw.XLeft)
	var w vg.Length
	for _, l := range k.labels() {
		w = max(w, st.Width(l))
	}
	return keyGap + keyBarWidth + keyTextGap + w
}

// draw puts the key on c right of x, beside the cells' rectangle.
func (k *colourKey) draw(c draw.Canvas, cells vg.Rectangle, x vg.Length) {
	st := textStyle(keyFontSize, color.Black, draw.XLeft)
	st.YAlign = draw.YCenter
	x0 := x + keyGap
	x1 := x0 + keyBarWidth
	top, bottom := cells.Max.Y, cells.Min.Y
	if k.nan {
		// The no-result swatch sits at the bottom, a bar's width tall.
		c.FillPolygon(noResult, rect(x0, bottom, x1, bottom+keyBarWidth))
		c.StrokeLines(keyOutline, closed(rect(x0, bottom, x1, bottom+keyBarWidth)))
		c.FillText(st, vg.Point{X: x1 + keyTextGap, Y: bottom + keyBarWidth/2}, noResultLabel)
		bottom += 2 * keyBarWidth
	}
	const steps = 48
	h := (top - bottom) / steps
	for i := 0; i < steps; i++ {
		f := (float64(i) + 0.5) / steps
		if k.same {
			f = 0.5
		}
		y := bottom + vg.Length(i)*h
		// Each step reaches the top and the next paints over it, so that
		// no seam shows between steps.
		c.FillPolygon(heatColour(f), rect(x0, y, x1, top))
	}
	c.StrokeLines(keyOutline, closed(rect(x0, bottom, x1, top)))
	c.FillText(st, vg.Point{X: x1 + keyTextGap, Y: top - keyFontSize/2}, k.high)
	c.FillText(st, vg.Point{X: x1 + keyTextGap, Y: bottom + keyFontSize/2}, k.low)
	k.drawnAt = vg.Rectangle{Min: vg.Point{X: x0, Y: cells.Min.Y}, Max: vg.Point{X: x + k.width(), Y: top}}
	k.cellsAt = cells
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

func closed(pts []vg.Point) []vg.Point { return append(pts, pts[0]) }
