package plot

import (
	"errors"
	"math"
	"sort"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bucket is one histogram bucket: the values from From to To, in µs.
type Bucket struct {
	From, To float64
	Count    int64
}

// LatencyInput is the RTT distribution of a request-response run: one
// series per request size or load phase.
type LatencyInput struct {
	Title  string
	Series []LatencySeries
	Footer Footer
}

// LatencySeries is one distribution with its percentiles, in µs (0:
// unknown, left unmarked).
type LatencySeries struct {
	Name           string
	Buckets        []Bucket
	P50, P99, P999 float64
}

// Latency draws each distribution as a histogram (share of samples per
// bin: ten per decade on a log axis, histBins on a linear one, so that
// a fine-grained histogram still reads as a shape) and, below on the same RTT axis, as a CDF; p50, p99 and p99.9
// are marked on both.
func Latency(in LatencyInput) (*Figure, error) {
	f := &Figure{Kind: "latency", Title: in.Title, Footer: in.Footer}
	var hist, cdf [][]Point
	var marks []float64
	total := 0
	var edges []float64
	for _, s := range in.Series {
		for _, b := range s.Buckets {
			edges = append(edges, b.From, b.To)
		}
	}
	logX := Axis{Quantity: Micros}.wantsLog(edges)
	for _, s := range in.Series {
		h, _ := distribution(rebin(s.Buckets, logX))
		_, c := distribution(s.Buckets) // the CDF keeps every bucket's edge
		hist, cdf = append(hist, h), append(cdf, c)
		total += len(h)
		marks = append(marks, s.P50, s.P99, s.P999)
	}
	if total == 0 {
		return nil, errors.New("latency: the run has no RTT histogram to draw")
	}
	x := Axis{Label: "RTT", Quantity: Micros}
	allX, allY := allPoints(hist...)
	allX = append(allX, marks...)
	top := f.newPanel(x, Axis{Label: "Share of samples", Quantity: Percent, Scale: Linear}, allX, allY)
	_, cdfY := allPoints(cdf...)
	bottom := f.newPanel(x, Axis{Label: "Samples at or below", Quantity: Percent, Scale: Linear}, allX, cdfY)
	for i, s := range in.Series {
		st := lineStyle(i)
		top.stairs(s.Name, hist[i], rebin(s.Buckets, logX), st)
		bottom.line(s.Name, cdf[i], st, false)
		pm := percentileMarks{style: dashed(st), values: []float64{s.P50, s.P99, s.P999}, names: []string{"p50", "p99", "p99.9"}, row: i}
		for _, b := range []*panelBuilder{top, bottom} {
			kept := pm.keep(b.panel.XLog)
			if len(kept.values) == 0 {
				continue
			}
			b.panel.Plot.Add(kept)
			b.extend(kept.values, nil)
			pts := make([]Point, len(kept.values))
			for j, v := range kept.values {
				pts[j] = Point{X: v}
			}
			b.panel.Series = append(b.panel.Series, Series{Name: s.Name + " percentiles", Points: pts})
		}
	}
	top.finish()
	bottom.finish()
	bottom.panel.Plot.Y.Min, bottom.panel.Plot.Y.Max = 0, 100
	linkX(f.Panels)
	f.note("Top: each bucket's share of the samples; bottom: the share at or below each RTT. Dashed: p50, p99 and p99.9.")
	return f, nil
}

// distribution is a histogram as (bucket start, share %) and its CDF as
// (bucket end, cumulative share %), buckets in order.
func distribution(buckets []Bucket) (hist, cdf []Point) {
	bs := append([]Bucket(nil), buckets...)
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].From < bs[j].From })
	var total int64
	for _, b := range bs {
		total += b.Count
	}
	if total == 0 {
		return nil, nil
	}
	var cum int64
	for _, b := range bs {
		cum += b.Count
		hist = append(hist, Point{b.From, 100 * float64(b.Count) / float64(total)})
		cdf = append(cdf, Point{b.To, 100 * float64(cum) / float64(total)})
	}
	return hist, cdf
}

// stairs draws a histogram as a filled outline over each bucket's span;
// the series keeps (bucket start, share).
func (b *panelBuilder) stairs(name string, hist []Point, buckets []Bucket, st draw.LineStyle) {
	kept := b.keep(name, hist)
	if len(kept) == 0 {
		return
	}
	widths := map[float64]float64{}
	for _, bk := range buckets {
		widths[bk.From] = bk.To
	}
	var outline plotter.XYs
	for _, p := range kept {
		to := widths[p.X]
		if to <= p.X {
			to = p.X * 1.01 // a one-value bucket still shows
		}
		outline = append(outline, plotter.XY{X: p.X, Y: 0}, plotter.XY{X: p.X, Y: p.Y}, plotter.XY{X: to, Y: p.Y}, plotter.XY{X: to, Y: 0})
		b.xs = append(b.xs, to)
	}
	l, err := plotter.NewLine(outline)
	if err != nil {
		return
	}
	l.LineStyle = st
	l.LineStyle.Width = vg.Points(1)
	l.FillColor = withAlpha(st.Color, 0x50)
	b.panel.Plot.Add(l)
	b.legend(name, l)
	b.ys = append(b.ys, 0)
}

// percentileMarks draws dashed vertical lines at percentiles, each named
// at the top of the panel; row staggers the names of several series.
type percentileMarks struct {
	style  draw.LineStyle
	values []float64
	names  []string
	row    int
}

// keep leaves out the unknown (0) marks and, on a log axis, any ≤ 0.
func (m percentileMarks) keep(logX bool) percentileMarks {
	out := m
	out.values, out.names = nil, nil
	for i, v := range m.values {
		if v > 0 || (!logX && v != 0) {
			out.values = append(out.values, v)
			out.names = append(out.names, m.names[i])
		}
	}
	return out
}

func (m percentileMarks) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := text.Style{
		Color:   m.style.Color,
		Font:    p.X.Tick.Label.Font,
		XAlign:  draw.XLeft,
		YAlign:  draw.YTop,
		Handler: p.TextHandler,
	}
	sty.Font.Size = 7
	lineH := sty.Height("p")
	for i, v := range m.values {
		x := trX(v)
		if !c.ContainsX(x) {
			continue
		}
		c.StrokeLines(m.style, []vg.Point{{X: x, Y: c.Min.Y}, {X: x, Y: c.Max.Y}})
		y := c.Max.Y - vg.Length(m.row*3+i)*lineH
		c.FillText(sty, vg.Point{X: x + 2, Y: y}, m.names[i]+" "+tickLabel(Micros, v))
	}
}

// histBins is the number of bins of a histogram on a linear axis.
const histBins = 40

// rebin regroups buckets into display bins: on a log axis ten per
// decade, else histBins over the range. A bucket goes to the bin of its
// middle; its samples are never split or lost.
func rebin(buckets []Bucket, logX bool) []Bucket {
	if len(buckets) == 0 {
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, b := range buckets {
		lo, hi = math.Min(lo, b.From), math.Max(hi, b.To)
	}
	var edge func(i int) float64
	var index func(v float64) int
	switch {
	case logX && lo > 0:
		k0 := math.Floor(10 * math.Log10(lo))
		edge = func(i int) float64 { return math.Pow(10, (k0+float64(i))/10) }
		index = func(v float64) int { return int(math.Floor(10*math.Log10(v) - k0)) }
	case logX:
		// Values ≤ 0 keep their own bucket; Latency leaves them out of
		// the log axis and says so.
		var out, pos []Bucket
		for _, b := range buckets {
			if b.From <= 0 {
				out = append(out, b)
			} else {
				pos = append(pos, b)
			}
		}
		return append(out, rebin(pos, true)...)
	case hi > lo:
		w := (hi - lo) / histBins
		edge = func(i int) float64 { return lo + float64(i)*w }
		index = func(v float64) int { return min(histBins-1, int((v-lo)/w)) }
	default:
		return buckets
	}
	counts := map[int]int64{}
	var order []int
	for _, b := range buckets {
		i := index((b.From + b.To) / 2)
		if _, ok := counts[i]; !ok {
			order = append(order, i)
		}
		counts[i] += b.Count
	}
	sort.Ints(order)
	out := make([]Bucket, 0, len(order))
	for _, i := range order {
		out = append(out, Bucket{From: edge(i), To: edge(i + 1), Count: counts[i]})
	}
	return out
}
