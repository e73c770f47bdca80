package result

import (
	"math"
	"testing"
)

// Two rows joined give the figures of all their blocks as one: checked
// against the blocks themselves.
func TestJoinTripTimes(t *testing.T) {
	figures := func(vs ...float64) *TripTimes {
		tt := &TripTimes{Count: int64(len(vs)), MinUs: vs[0], MaxUs: vs[0]}
		for _, v := range vs {
			tt.MeanUs += v / float64(len(vs))
			tt.MinUs, tt.MaxUs = min(tt.MinUs, v), max(tt.MaxUs, v)
		}
		var m2 float64
		for _, v := range vs {
			m2 += (v - tt.MeanUs) * (v - tt.MeanUs)
		}
		if len(vs) > 1 {
			tt.StdevUs = math.Sqrt(m2 / float64(len(vs)-1))
		}
		return tt
	}
	a, b := figures(10, 12, 11), figures(20, 9)
	a.Histogram = &Percentiles{Count: 3}
	b.Histogram = &Percentiles{Count: 2}
	b.Negative, b.BadBlocks = 1, 2
	j := JoinTripTimes(a, b)
	want := figures(10, 12, 11, 20, 9)
	if j.Count != 5 || j.MinUs != 9 || j.MaxUs != 20 || math.Abs(j.MeanUs-want.MeanUs) > 1e-9 || math.Abs(j.StdevUs-want.StdevUs) > 1e-9 {
		t.Errorf("joined %+v, want %+v", j, want)
	}
	if j.Negative != 1 || j.BadBlocks != 2 || j.Histogram != nil {
		t.Errorf("joined counts %d negative, %d bad, histogram %v: want 1, 2, none (percentiles do not pool)", j.Negative, j.BadBlocks, j.Histogram)
	}
	if a.Count != 3 || b.Count != 2 {
		t.Error("JoinTripTimes changed its arguments")
	}
	if k := JoinTripTimes(nil, b); k == b || k.Count != 2 || k.Histogram == nil {
		t.Errorf("joined with nothing: %+v, want a copy of b", k)
	}
	if JoinTripTimes(nil, nil) != nil {
		t.Error("nothing joined with nothing is something")
	}
	if k := JoinTripTimes(&TripTimes{}, a); k.Histogram == nil || k.Histogram.Count != 3 {
		t.Errorf("an empty row joined: %+v, want a's histogram kept", k)
	}
}

func TestTripTimesInFlight(t *testing.T) {
	tt := &TripTimes{Count: 10, MeanUs: 20000}
	// 100 MB over 10 s is 10 MB/s; 20 ms of it is 200 kB.
	if got := tt.InFlightBytes(100e6, 10); math.Abs(got-200e3) > 1e-6 {
		t.Errorf("in flight %v, want 200000", got)
	}
	if (&TripTimes{}).InFlightBytes(1, 1) != 0 || tt.InFlightBytes(1, 0) != 0 {
		t.Error("in flight from nothing")
	}
}
