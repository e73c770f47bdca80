package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSignedDist checks quantiles of signed values against the exact
// nearest-rank answer from the sorted input, within the histogram's
// precision (1/128 of the magnitude, plus 1 ns).
func TestSignedDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	uniform := func(lo, hi int64) []int64 {
		v := make([]int64, 5000)
		for i := range v {
			v[i] = lo + rng.Int64N(hi-lo+1)
		}
		return v
	}
	tests := []struct {
		name   string
		values []int64
	}{
		{"one value", []int64{-42}},
		{"all negative", []int64{-1, -5, -3, -1000, -7}},
		{"all positive", []int64{1, 5, 3, 1000, 7, 0}},
		{"symmetric", []int64{-3, -2, -1, 0, 1, 2, 3}},
		{"mixed uniform", uniform(-50_000, 200_000)},
		{"mostly negative", uniform(-1_000_000, 1_000)},
		{"large magnitudes", uniform(-5e9, 5e9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newSignedDist()
			for _, v := range tt.values {
				d.record(v)
			}
			sorted := slices.Sorted(slices.Values(tt.values))
			for _, p := range []float64{0, 1, 10, 50, 90, 99, 99.9, 100} {
				rank := int(math.Ceil(p / 100 * float64(len(sorted))))
				want := sorted[max(rank, 1)-1]
				got := d.quantile(p)
				tol := float64(abs64(want))/128 + 1
				if math.Abs(float64(got-want)) > tol {
					t.Errorf("p%v = %d, want %d ± %.0f", p, got, want, tol)
				}
			}
			pc := d.percentiles(0)
			if pc.Count != int64(len(sorted)) {
				t.Errorf("count %d, want %d", pc.Count, len(sorted))
			}
			if pc.Min != float64(sorted[0])/1e3 || pc.Max != float64(sorted[len(sorted)-1])/1e3 {
				t.Errorf("min/max %v/%v µs, want exact %d/%d ns", pc.Min, pc.Max, sorted[0], sorted[len(sorted)-1])
			}
			var sum float64
			for _, v := range sorted {
				sum += float64(v)
			}
			if want := sum / float64(len(sorted)) / 1e3; math.Abs(pc.Mean-want) > 1e-6*math.Abs(want)+1e-9 {
				t.Errorf("mean %v, want %v", pc.Mean, want)
			}
			if !(pc.Min <= pc.P50 && pc.P50 <= pc.P90 && pc.P90 <= pc.P99 && pc.P99 <= pc.P999 && pc.P999 <= pc.Max) {
				t.Errorf("percentiles not ordered: %+v", *pc)
			}
		})
	}
}

func TestSignedDistShiftMergeReset(t *testing.T) {
	a, b := newSignedDist(), newSignedDist()
	for v := int64(-100); v < 0; v++ {
		a.record(v * 1000)
	}
	for v := int64(0); v < 100; v++ {
		b.record(v * 1000)
	}
	a.merge(&b)
	pc := a.percentiles(100_000) // shift by +100 µs: 0..199 µs
	if pc.Count != 200 || pc.Min != 0 || pc.Max != 199 {
		t.Fatalf("merged and shifted: %+v", *pc)
	}
	if math.Abs(pc.P50-99) > 1 || math.Abs(pc.Mean-99.5) > 1e-9 {
		t.Errorf("p50 %v mean %v, want 99 and 99.5", pc.P50, pc.Mean)
	}
	a.reset()
	if a.percentiles(0) != nil {
		t.Fatal("reset distribution not empty")
	}
	// Extremes must not panic; beyond the histogram they read as its edge,
	// while min and max stay exact.
	a.record(math.MinInt64)
	a.record(math.MaxInt64)
	if q := a.quantile(50); q > -histMax {
		t.Errorf("p50 of {MinInt64, MaxInt64} = %d, want <= -%d", q, int64(histMax))
	}
	if a.min != math.MinInt64 || a.max != math.MaxInt64 {
		t.Errorf("min/max %d/%d, want exact", a.min, a.max)
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
