package stats

import (
	"math"
	"testing"
)

func TestEstimateOffset(t *testing.T) {
	// exchange makes a sample for a server clock offset off, forward and
	// backward path delays fwd and back, and server time in between.
	exchange := func(t1, off, fwd, hold, back int64) OffsetSample {
		return OffsetSample{T1: t1, T2: t1 + fwd + off, T3: t1 + fwd + hold + off, T4: t1 + fwd + hold + back}
	}
	tests := []struct {
		name      string
		samples   []OffsetSample
		offset    int64
		bound     int64
		ok        bool
		trueOff   int64 // must lie within offset ± bound
		checkTrue bool
	}{
		{"none", nil, 0, 0, false, 0, false},
		{"symmetric path is exact", []OffsetSample{exchange(1000, 5000, 100, 20, 100)}, 5000, 100, true, 5000, true},
		{"negative offset", []OffsetSample{exchange(1000, -7000, 40, 0, 40)}, -7000, 40, true, -7000, true},
		{"asymmetry stays in the bound", []OffsetSample{exchange(0, 300, 900, 10, 100)}, 700, 500, true, 300, true},
		{"smallest RTT wins", []OffsetSample{
			exchange(0, 1000, 5000, 0, 100),   // RTT 5100, skewed
			exchange(10000, 1000, 60, 50, 40), // RTT 100
			exchange(20000, 1000, 300, 0, 300),
		}, 1010, 50, true, 1000, true},
		{"negative RTT skipped", []OffsetSample{
			{T1: 100, T2: 50, T3: 40, T4: 90}, // server time runs backwards
			exchange(0, 10, 20, 0, 20),
		}, 10, 20, true, 10, true},
		{"all invalid", []OffsetSample{{T1: 100, T2: 0, T3: 0, T4: 50}}, 0, 0, false, 0, false},
		{"large clocks do not overflow", []OffsetSample{exchange(math.MaxInt64/2, math.MaxInt64/4, 10, 0, 10)}, math.MaxInt64 / 4, 10, true, math.MaxInt64 / 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, bound, ok := EstimateOffset(tt.samples)
			if off != tt.offset || bound != tt.bound || ok != tt.ok {
				t.Fatalf("got %d ± %d ok %v, want %d ± %d ok %v", off, bound, ok, tt.offset, tt.bound, tt.ok)
			}
			if tt.checkTrue && (tt.trueOff < off-bound || tt.trueOff > off+bound) {
				t.Errorf("true offset %d outside %d ± %d", tt.trueOff, off, bound)
			}
		})
	}
}

// FuzzEstimateOffset: for any exchange with a real clock offset and
// non-negative path delays, the true offset lies within the bound.
func FuzzEstimateOffset(f *testing.F) {
	f.Add(int64(0), int64(100), uint32(10), uint32(3), uint32(50))
	f.Fuzz(func(t *testing.T, t1, off int64, fwd, hold, back uint32) {
		if t1 < -1<<60 || t1 > 1<<60 || off < -1<<60 || off > 1<<60 {
			return // clocks within 36 years of the epoch's either side
		}
		s := OffsetSample{T1: t1, T2: t1 + int64(fwd) + off}
		s.T3 = s.T2 + int64(hold)
		s.T4 = t1 + int64(fwd) + int64(hold) + int64(back)
		got, bound, ok := EstimateOffset([]OffsetSample{s})
		if !ok || bound < 0 || off < got-bound-1 || off > got+bound+1 {
			t.Fatalf("offset %d: estimate %d ± %d ok %v", off, got, bound, ok)
		}
	})
}
