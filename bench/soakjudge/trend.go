package main

import (
	"errors"
	"math"
	"sync"
)

// Trend is a least-squares line's slope over a series, in the series'
// units per second, with the half-width of its 99% confidence interval
// (95% let one clean soak in nine fail: with four figures judged a run,
// a 2.5% tail each is too often for a gate).
type Trend struct {
	Slope float64
	Half  float64
	N     int
	Rho   float64 // the residuals' lag-1 autocorrelation, at most 0.9
}

// Low and High are the confidence interval's ends.
func (t Trend) Low() float64  { return t.Slope - t.Half }
func (t Trend) High() float64 { return t.Slope + t.Half }

// fitTrend fits y = a + b·t by least squares. The interval is the usual
// one, widened when the residuals are autocorrelated; the samples it is
// given should be far enough apart that they mostly are not (the soak's
// are 10-s means, whose lag-1 autocorrelation was -0.2 to 0.2).
func fitTrend(ts, ys []float64) (Trend, error) {
	n := len(ts)
	if n != len(ys) {
		return Trend{}, errors.New("times and values differ in length")
	}
	if n < 3 {
		return Trend{}, errors.New("a trend needs at least 3 samples")
	}
	var mt, my float64
	for i := range ts {
		mt += ts[i]
		my += ys[i]
	}
	mt /= float64(n)
	my /= float64(n)
	var stt, sty float64
	for i := range ts {
		stt += (ts[i] - mt) * (ts[i] - mt)
		sty += (ts[i] - mt) * (ys[i] - my)
	}
	if stt == 0 {
		return Trend{}, errors.New("all samples at one time")
	}
	b := sty / stt
	res := make([]float64, n)
	var sse float64
	for i := range ts {
		res[i] = ys[i] - (my + b*(ts[i]-mt))
		sse += res[i] * res[i]
	}
	se := math.Sqrt(sse / float64(n-2) / stt)
	// Samples that lean on their neighbours (a heap between collections)
	// hold less news than their count: widen the interval by the usual
	// factor for errors with a first-order autocorrelation ρ.
	tr := Trend{Slope: b, N: n, Rho: lag1(res, sse)}
	if tr.Rho > 0 {
		se *= math.Sqrt((1 + tr.Rho) / (1 - tr.Rho))
	}
	tr.Half = t995(n-2) * se
	return tr, nil
}

// t995 is tQuantile(0.995, df), worked out once for the df a soak has.
func t995(df int) float64 {
	if df < len(t995Table()) {
		return t995Table()[df]
	}
	return tQuantile(0.995, df)
}

var t995Table = sync.OnceValue(func() []float64 {
	q := make([]float64, 200)
	for df := 1; df < len(q); df++ {
		q[df] = tQuantile(0.995, df)
	}
	return q
})

// lag1 is the residuals' lag-1 autocorrelation, capped at 0.9 (beyond
// it the samples say almost nothing about a trend, and the factor it
// sets would be unbounded).
func lag1(res []float64, sse float64) float64 {
	if sse == 0 {
		return 0
	}
	var c float64
	for i := 1; i < len(res); i++ {
		c += res[i] * res[i-1]
	}
	return min(c/sse, 0.9)
}

// tQuantile is Student's t distribution's p-quantile (p in [0.5, 1)) for
// df degrees of freedom: bisection on its CDF, which is Simpson's rule on
// its density.
func tQuantile(p float64, df int) float64 {
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < p {
		hi *= 2
	}
	for range 40 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T ≤ x) for x ≥ 0.
func tCDF(x float64, df int) float64 {
	v := float64(df)
	lg1, _ := math.Lgamma((v + 1) / 2)
	lg2, _ := math.Lgamma(v / 2)
	c := math.Exp(lg1-lg2) / math.Sqrt(v*math.Pi)
	pdf := func(u float64) float64 { return c * math.Pow(1+u*u/v, -(v+1)/2) }
	const steps = 512 // even; Simpson on this smooth a density is exact to 1e-6 here
	h := x / steps
	sum := pdf(0) + pdf(x)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * pdf(float64(i)*h)
	}
	return 0.5 + sum*h/3
}

// windowMeans averages the samples in consecutive windows of width
// seconds that start at from; windows without samples are left out.
func windowMeans(ts, ys []float64, from, width float64) (wt, wy []float64) {
	type acc struct{ t, y, n float64 }
	var ws []acc
	for i, t := range ts {
		if t < from {
			continue
		}
		k := int((t - from) / width)
		for len(ws) <= k {
			ws = append(ws, acc{})
		}
		ws[k].t += t
		ws[k].y += ys[i]
		ws[k].n++
	}
	for _, w := range ws {
		if w.n > 0 {
			wt = append(wt, w.t/w.n)
			wy = append(wy, w.y/w.n)
		}
	}
	return wt, wy
}
