package plot

import (
	"errors"
	"math"
	"time"
)

// ProbesInput is the runs of probes (ping, tcp-connect) over time, one
// series per pair: each run's RTT p50 and p99 (a ping's echo, a
// tcp-connect's handshake) on the top panel, its loss (requests or
// attempts unanswered) below.
type ProbesInput struct {
	Title  string
	Pairs  []ProbePair
	Footer Footer
}

// ProbePair is one source → destination's probe runs, in time order.
type ProbePair struct {
	Name string // e.g. "a → router (icmp)"
	Runs []ProbeRun
}

// ProbeRun is one probe run's figures; NaN: not measured (nothing
// answered has no times).
type ProbeRun struct {
	At          time.Time // when the run started
	P50us       float64
	P99us       float64
	LostPercent float64
}

// Probes draws the pairs' RTT percentiles (p50 solid, p99 dashed, one
// colour a pair) and loss over wall-clock time, from the first run
// drawn; the time axis is in seconds, minutes, hours or days by the span.
func Probes(in ProbesInput) (*Figure, error) {
	var start, end time.Time
	for _, p := range in.Pairs {
		for _, r := range p.Runs {
			if start.IsZero() || r.At.Before(start) {
				start = r.At
			}
			if r.At.After(end) {
				end = r.At
			}
		}
	}
	if start.IsZero() {
		return nil, errors.New("probes: no probe runs (ping, tcp-connect) to draw")
	}
	unit, div := timeUnit(end.Sub(start))
	x := Axis{Label: "Time (" + unit + ") since " + start.UTC().Format("2006-01-02 15:04 UTC"), Quantity: Number, Scale: Linear}
	at := func(t time.Time) float64 { return t.Sub(start).Seconds() / div }

	type pairPoints struct{ p50, p99, loss []Point }
	pts := make([]pairPoints, len(in.Pairs))
	var rtt, loss [][]Point
	for i, p := range in.Pairs {
		for _, r := range p.Runs {
			if !math.IsNaN(r.P50us) {
				pts[i].p50 = append(pts[i].p50, Point{at(r.At), r.P50us})
			}
			if !math.IsNaN(r.P99us) {
				pts[i].p99 = append(pts[i].p99, Point{at(r.At), r.P99us})
			}
			if !math.IsNaN(r.LostPercent) {
				pts[i].loss = append(pts[i].loss, Point{at(r.At), r.LostPercent})
			}
		}
		rtt = append(rtt, pts[i].p50, pts[i].p99)
		loss = append(loss, pts[i].loss)
	}
	f := &Figure{Kind: "probes", Title: in.Title, Footer: in.Footer}
	if allX, allY := allPoints(rtt...); len(allX) > 0 {
		b := f.newPanel(x, Axis{Label: "RTT", Quantity: Micros}, allX, allY)
		for i, p := range in.Pairs {
			b.line(p.Name+" p50", pts[i].p50, lineStyle(i), true)
			b.line(p.Name+" p99", pts[i].p99, dashed(lineStyle(i)), true)
		}
		b.finish()
	}
	if allX, allY := allPoints(loss...); len(allX) > 0 {
		b := f.newPanel(x, Axis{Label: "Loss", Quantity: Percent, Scale: Linear}, allX, allY)
		for i, p := range in.Pairs {
			b.line(p.Name, pts[i].loss, lineStyle(i), true)
		}
		b.finish()
	}
	if len(f.Panels) == 0 {
		return nil, errors.New("probes: the runs have no times or loss to draw")
	}
	linkX(f.Panels)
	f.note("p50 solid, p99 dashed; a run where nothing answered has no times, only its loss.")
	return f, nil
}

// timeUnit is the unit a time axis spanning span reads in, and its
// length in seconds.
func timeUnit(span time.Duration) (string, float64) {
	switch {
	case span >= 3*24*time.Hour:
		return "days", 86400
	case span >= 3*time.Hour:
		return "hours", 3600
	case span >= 3*time.Minute:
		return "minutes", 60
	}
	return "s", 1
}
