package stats

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/wireperf/wireperf/internal/result"
)

func TestSummarize(t *testing.T) {
	// 1..1000 µs: p50 500, p90 900, p99 990, p99.9 999, mean 500.5.
	oneToThousand := func(unit int64) *hdrhistogram.Histogram {
		h := hdrhistogram.New(1, 10_000_000_000, 3)
		for v := int64(1); v <= 1000; v++ {
			_ = h.RecordValue(v * 1000 / unit)
		}
		return h
	}
	want := result.Percentiles{Count: 1000, Min: 1, Mean: 500.5, P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000}
	tests := []struct {
		name string
		h    *hdrhistogram.Histogram
		unit int64
		want result.Percentiles
	}{
		{"ns histogram", oneToThousand(1), 1, want},
		{"µs histogram", oneToThousand(1000), 1000, want},
		{"empty", hdrhistogram.New(1, 1000, 3), 1, result.Percentiles{}},
		{"nil", nil, 1, result.Percentiles{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.h, tt.unit)
			if got.Count != tt.want.Count {
				t.Fatalf("count %d, want %d", got.Count, tt.want.Count)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"min", got.Min, tt.want.Min}, {"mean", got.Mean, tt.want.Mean}, {"p50", got.P50, tt.want.P50},
				{"p90", got.P90, tt.want.P90}, {"p99", got.P99, tt.want.P99}, {"p99.9", got.P999, tt.want.P999},
				{"max", got.Max, tt.want.Max},
			} {
				// Three significant digits: within 0.1 % (plus one unit).
				if !near(f.got, f.want, f.want/1000+1e-3*float64(tt.unit)/1000+1e-9) {
					t.Errorf("%s = %v µs, want %v", f.name, f.got, f.want)
				}
			}
		})
	}
}
