package main

import (
	"fmt"
	"math"
	"strings"
)

// Bound is how fast a figure may grow before the soak calls it a leak,
// per accepted test ("per client"): what one test may leave behind.
type Bound struct {
	Name      string
	Unit      string  // "bytes" or "" for a count
	PerClient float64 // units per accepted test
}

// Verdict is one figure's judgement over a soak.
type Verdict struct {
	Bound
	Mean         float64
	Trend        Trend   // per second
	TestsPerHour float64 // the run's rate of accepted tests
	PerHour      float64 // the bound in units per hour, at that rate
	// CatchPerClient is the smallest leak per test that this run's noise
	// would still show above the bound (the interval's low end clear of
	// it, 99.5% of the time); CatchPerHour is the same in units per hour.
	CatchPerClient float64
	CatchPerHour   float64
	Growing        bool
}

// judge fits a trend to the series' windowed samples and calls it growing
// when even the low end of the slope's 99% interval is above the bound:
// noise widens the interval and so cannot fail the soak by itself, and a
// leak of CatchPerClient or more fails it.
func judge(b Bound, ts, ys []float64, testsPerHour float64) (Verdict, error) {
	tr, err := fitTrend(ts, ys)
	if err != nil {
		return Verdict{}, fmt.Errorf("%s: %w", b.Name, err)
	}
	var mean float64
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	v := Verdict{Bound: b, Mean: mean, Trend: tr, TestsPerHour: testsPerHour, PerHour: b.PerClient * testsPerHour}
	v.CatchPerHour = v.PerHour + 2*tr.Half*3600
	if testsPerHour > 0 {
		v.CatchPerClient = v.CatchPerHour / testsPerHour
	} else {
		v.CatchPerClient = math.Inf(1)
	}
	v.Growing = tr.Low()*3600 > v.PerHour
	return v, nil
}

// String is the verdict's line in the soak's log.
func (v Verdict) String() string {
	state := "flat"
	if v.Growing {
		state = "GROWING"
	}
	perClient := func(perHour float64) float64 {
		if v.TestsPerHour <= 0 {
			return math.NaN()
		}
		return perHour / v.TestsPerHour
	}
	sl, hf := v.Trend.Slope*3600, v.Trend.Half*3600
	return fmt.Sprintf("%s: mean %s, trend %s ± %s per hour (%s ± %s per client), bound %s per client (%s per hour): %s; a leak of %s per client, or %s per hour, is caught within the soak's length",
		v.Name, v.fmt(v.Mean), v.fmtSigned(sl), v.fmt(hf), v.fmtSigned(perClient(sl)), v.fmt(perClient(hf)),
		v.fmt(v.PerClient), v.fmt(v.PerHour), state, v.fmt(v.CatchPerClient), v.fmt(v.CatchPerHour))
}

func (v Verdict) fmtSigned(x float64) string {
	if x >= 0 {
		return "+" + v.fmt(x)
	}
	return "-" + v.fmt(-x)
}

// fmt writes x in the figure's unit: KB and MB for bytes (1000s), up to
// three decimals for counts.
func (v Verdict) fmt(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "?"
	}
	if v.Unit != "bytes" {
		if math.Abs(x) >= 100 {
			return fmt.Sprintf("%.0f", x)
		}
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", x), "0"), ".")
	}
	a := math.Abs(x)
	switch {
	case a >= 1e6:
		return fmt.Sprintf("%.1f MB", x/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.1f KB", x/1e3)
	}
	return fmt.Sprintf("%.0f B", x)
}
