package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTQuantileMatchesTables(t *testing.T) {
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.706}, {0.975, 5, 2.571}, {0.975, 10, 2.228}, {0.975, 30, 2.042}, {0.995, 20, 2.845}, {0.5, 7, 0},
	} {
		if got := tQuantile(c.p, c.df); math.Abs(got-c.want) > 0.001 {
			t.Errorf("tQuantile(%v, %d) = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
}

func TestFitTrendOnALine(t *testing.T) {
	ts := []float64{0, 10, 20, 30, 40}
	ys := []float64{5, 25, 45, 65, 85}
	tr, err := fitTrend(ts, ys)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tr.Slope-2) > 1e-12 || tr.Half > 1e-9 || tr.N != 5 {
		t.Fatalf("fitTrend = %+v, want slope 2, half 0, 5 samples", tr)
	}
	if _, err := fitTrend(ts[:2], ys[:2]); err == nil {
		t.Error("fitTrend on 2 samples: no error")
	}
	if _, err := fitTrend([]float64{1, 1, 1}, []float64{1, 2, 3}); err == nil {
		t.Error("fitTrend at one time: no error")
	}
}

func TestFitTrendInterval(t *testing.T) {
	// With noise of known spread the interval's half-width is its
	// t-quantile times the slope's standard error: σ/√Σ(t-t̄)².
	rng := rand.New(rand.NewPCG(1, 2))
	const n, sigma = 40, 3.0
	covered := 0
	for range 400 {
		ts, ys := series(rng, n, 10, 100, 0.5, sigma)
		tr, err := fitTrend(ts, ys)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Low() <= 0.5 && 0.5 <= tr.High() {
			covered++
		}
	}
	// 99% intervals: 396 of 400 expected; binomial spread ±2.
	if covered < 388 {
		t.Errorf("the true slope was inside the interval %d times in 400, want about 396", covered)
	}
}

// series is n samples every step seconds of level + slope·t + Gaussian
// noise of the given spread.
func series(rng *rand.Rand, n int, step, level, slope, sigma float64) (ts, ys []float64) {
	for i := range n {
		t := float64(i) * step
		ts = append(ts, t)
		ys = append(ys, level+slope*t+rng.NormFloat64()*sigma)
	}
	return ts, ys
}

func TestWindowMeans(t *testing.T) {
	ts := []float64{1, 5, 12, 13, 14, 15, 35, 36}
	ys := []float64{100, 100, 1, 2, 3, 4, 7, 9}
	wt, wy := windowMeans(ts, ys, 10, 10)
	wantT := []float64{13.5, 35.5}
	wantY := []float64{2.5, 8}
	if len(wt) != 2 || wt[0] != wantT[0] || wt[1] != wantT[1] || wy[0] != wantY[0] || wy[1] != wantY[1] {
		t.Fatalf("windowMeans = %v %v, want %v %v (the warm-up left out, the empty window skipped)", wt, wy, wantT, wantY)
	}
}

// A soak's heap: 9 MB live, 1.5 MB of noise in a 10-s mean, 37 samples
// (400 s less 30 s of warm-up), 2,400 tests an hour.
const (
	heapLevel    = 9e6
	heapNoise    = 1.5e6
	heapSamples  = 37
	testsPerHour = 2400
)

func TestJudgePassesFlatNoisySeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		ts, ys := series(rng, heapSamples, 10, heapLevel, 0, heapNoise)
		v, err := judge(bounds.heap, ts, ys, testsPerHour)
		if err != nil {
			t.Fatal(err)
		}
		if v.Growing {
			t.Fatalf("series %d: a flat series judged growing: %v", i, v)
		}
	}
}

func TestJudgeCatchesAKnownLeak(t *testing.T) {
	// 64 KB per test at 2,400 tests an hour.
	slope := 64e3 * testsPerHour / 3600
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		ts, ys := series(rng, heapSamples, 10, heapLevel, slope, heapNoise)
		v, err := judge(bounds.heap, ts, ys, testsPerHour)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Growing {
			t.Fatalf("series %d: a 64 KB-per-test leak judged flat: %v", i, v)
		}
		if !strings.Contains(v.String(), "GROWING") {
			t.Fatalf("series %d: the verdict's line does not say GROWING: %v", i, v)
		}
	}
}

func TestJudgeCatchesWhatItSaysItCatches(t *testing.T) {
	// The catch figure is the leak whose slope clears the bound by two
	// half-widths: caught 99.5% of the time. Leaks a little under the
	// bound are not.
	rng := rand.New(rand.NewPCG(7, 8))
	ts, ys := series(rng, heapSamples, 10, heapLevel, 0, heapNoise)
	ref, err := judge(bounds.heap, ts, ys, testsPerHour)
	if err != nil {
		t.Fatal(err)
	}
	caught := func(perClient float64) int {
		n := 0
		for range 400 {
			ts, ys := series(rng, heapSamples, 10, heapLevel, perClient*testsPerHour/3600, heapNoise)
			v, err := judge(bounds.heap, ts, ys, testsPerHour)
			if err != nil {
				t.Fatal(err)
			}
			if v.Growing {
				n++
			}
		}
		return n
	}
	if n := caught(ref.CatchPerClient); n < 390 {
		t.Errorf("a leak of %.0f B per test (the figure the judge claims) caught %d times in 400, want about 398", ref.CatchPerClient, n)
	}
	if n := caught(bounds.heap.PerClient * 0.9); n > 20 {
		t.Errorf("a leak of 90%% of the bound caught %d times in 400, want under 20", n)
	}
}

func TestVerdictLineSaysWhatItCatches(t *testing.T) {
	v, err := judge(bounds.heap, []float64{0, 10, 20, 30}, []float64{1e6, 1.1e6, 0.9e6, 1e6}, 3600)
	if err != nil {
		t.Fatal(err)
	}
	line := v.String()
	for _, want := range []string{"heap live: mean 1.0 MB", "flat", "bound 8.0 KB per client (28.8 MB per hour)", "is caught within the soak's length"} {
		if !strings.Contains(line, want) {
			t.Errorf("verdict line %q lacks %q", line, want)
		}
	}
}

func TestJudgePassesFlatAutocorrelatedSeries(t *testing.T) {
	// AR(1) noise with ρ = 0.6: the plain interval is too narrow and
	// misses the true slope (0) far more often than 1%; widened, it
	// misses less than half as often, and the judge, whose bound is
	// above 0, calls almost none of them growing.
	rng := rand.New(rand.NewPCG(9, 10))
	const rho, runs = 0.6, 400
	plainMisses, misses, growing := 0, 0, 0
	for range runs {
		ts := make([]float64, heapSamples)
		ys := make([]float64, heapSamples)
		e := rng.NormFloat64() * heapNoise
		for i := range ts {
			ts[i] = float64(i) * 10
			e = rho*e + math.Sqrt(1-rho*rho)*rng.NormFloat64()*heapNoise
			ys[i] = heapLevel + e
		}
		v, err := judge(bounds.heap, ts, ys, testsPerHour)
		if err != nil {
			t.Fatal(err)
		}
		tr := v.Trend
		plain := tr.Half
		if tr.Rho > 0 {
			plain /= math.Sqrt((1 + tr.Rho) / (1 - tr.Rho))
		}
		if math.Abs(tr.Slope) > plain {
			plainMisses++
		}
		if math.Abs(tr.Slope) > tr.Half {
			misses++
		}
		if v.Growing {
			growing++
		}
	}
	t.Logf("of %d flat AR(1) series: plain interval missed 0 %d times, widened %d, judged growing %d", runs, plainMisses, misses, growing)
	if misses*2 > plainMisses || misses > runs*15/100 || growing > runs/50 {
		t.Errorf("the widened interval missed 0 %d times in %d (the plain one %d), %d judged growing; want under half the plain one's, under 15%%, and under 2%% growing",
			misses, runs, plainMisses, growing)
	}
}
