package plot

import (
	"errors"
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// SweepInput is a summary value against one axis of a campaign, one line
// per value of a second axis: goodput against the socket buffer, one line
// per test duration.
type SweepInput struct {
	Title  string
	X, Y   Axis
	Series []SweepSeries
	// Stat names what summarised points' Y is (mean, median, ...); empty
	// for the mean of Values.
	Stat   string
	Footer Footer
}

// SweepSeries is one line: the points of one value of the series axis.
type SweepSeries struct {
	Name   string // e.g. "-t 60s" or "4 streams"
	Points []SweepPoint
}

// SweepPoint is one point of the sweep with its repetitions' values,
// or summarised already (an archive's pivot): Y with the Min and Max over
// N repetitions, used when Values is empty.
type SweepPoint struct {
	X      float64
	Values []float64

	Y, Min, Max float64
	N           int
}

// values are the figures the point's line and bar are made of.
func (p SweepPoint) values() []float64 {
	if len(p.Values) > 0 || p.N == 0 {
		return p.Values
	}
	return []float64{p.Min, p.Y, p.Max}
}

// reps is the point's number of repetitions.
func (p SweepPoint) reps() int {
	if len(p.Values) > 0 {
		return len(p.Values)
	}
	return p.N
}

// Sweep draws the lines through the mean of each point's repetitions,
// with bars from the smallest to the largest.
func Sweep(in SweepInput) (*Figure, error) {
	if len(in.Series) == 0 {
		return nil, errors.New("sweep: no series to draw")
	}
	f := &Figure{Kind: "sweep", Title: in.Title, Footer: in.Footer}
	var allX, allY []float64
	reps := 0
	for _, s := range in.Series {
		for _, p := range s.Points {
			allX = append(allX, p.X)
			allY = append(allY, p.values()...)
			reps = max(reps, p.reps())
		}
	}
	in.X.AtData = true
	b := f.newPanel(in.X, in.Y, allX, allY)
	for i, s := range in.Series {
		mean, lo, hi := sweepLine(s.Points, b.panel.XLog, b.panel.YLog)
		st := lineStyle(i)
		b.line(s.Name, mean, st, true)
		kept := b.keep(s.Name+" min", lo)
		keptHi := b.keep(s.Name+" max", hi)
		if reps > 1 && len(kept) == len(keptHi) && len(kept) > 0 {
			bars := minMaxBars{xs: kept, hi: keptHi}
			if eb, err := plotter.NewYErrorBars(bars); err == nil {
				eb.LineStyle = st
				eb.CapWidth = vg.Points(6)
				b.panel.Plot.Add(eb)
			}
		}
	}
	b.finish()
	if reps > 1 {
		what := "the mean of each point's repetitions"
		if in.Stat != "" {
			what = "each point's " + in.Stat + " over its repetitions"
		}
		f.note("Lines join %s (up to %d); bars span the smallest to the largest.", what, reps)
	}
	return f, nil
}

// sweepLine is a series' means and extremes in x order. On a log y axis
// the repetitions ≤ 0 are left out of all three, and noted with the
// points; a point with none left keeps its 0 so the note counts it.
func sweepLine(pts []SweepPoint, xlog, ylog bool) (mean, lo, hi []Point) {
	sorted := append([]SweepPoint(nil), pts...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].X < sorted[j].X })
	for _, p := range sorted {
		if len(p.Values) == 0 && p.N > 0 {
			if ylog && p.Y <= 0 {
				mean = append(mean, Point{p.X, 0}) // noted with the points left out
				continue
			}
			mean = append(mean, Point{p.X, p.Y})
			lo = append(lo, Point{p.X, p.Min})
			hi = append(hi, Point{p.X, p.Max})
			continue
		}
		var sum float64
		n := 0
		mn, mx := math.Inf(1), math.Inf(-1)
		for _, v := range p.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || (ylog && v <= 0) {
				continue
			}
			sum += v
			n++
			mn, mx = math.Min(mn, v), math.Max(mx, v)
		}
		if n == 0 {
			mean = append(mean, Point{p.X, 0})
			continue
		}
		mean = append(mean, Point{p.X, sum / float64(n)})
		lo = append(lo, Point{p.X, mn})
		hi = append(hi, Point{p.X, mx})
	}
	return mean, lo, hi
}

// minMaxBars are error bars from lo to hi around the midpoint, in
// gonum's relative form.
type minMaxBars struct{ xs, hi []Point }

func (m minMaxBars) Len() int { return len(m.xs) }
func (m minMaxBars) XY(i int) (float64, float64) {
	return m.xs[i].X, m.xs[i].Y
}
func (m minMaxBars) YError(i int) (float64, float64) {
	return 0, m.hi[i].Y - m.xs[i].Y
}
