package figures

import (
	"math"
	"strings"
	"testing"
)

// TestWindowArithmetic: 64 KiB over 215 ms carries 2.44 Mbit/s; a stream
// at 2.40 was held by the window, one at 1.0 was not.
func TestWindowArithmetic(t *testing.T) {
	df := &DirectionFigures{Streams: 1, GoodputBps: 2.40e6}
	df.MaxSndWnd, df.BaselineRTTus = 65536, 215000
	w, ok := df.Window()
	if !ok {
		t.Fatal("no arithmetic")
	}
	if want := 65536 * 8 / 0.215; math.Abs(w.BoundBps-want) > 1e-6*want || !w.Limited {
		t.Fatalf("%+v, want bound %.0f and limited", w, want)
	}
	s := w.String()
	for _, want := range []string{"64.0 KBytes ÷ 215.00 ms = 2.44 Mbits/sec", "2.40 Mbits/sec (98%)", "the window was the limit"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	df.GoodputBps = 1.0e6
	if w, _ := df.Window(); w.Limited || strings.Contains(w.String(), "the limit") {
		t.Errorf("1 Mbit/s under a 2.44 Mbit/s bound called window-limited: %s", w)
	}
	if _, ok := (&DirectionFigures{}).Window(); ok {
		t.Error("arithmetic without a window")
	}
	var none *DirectionFigures
	if _, ok := none.Window(); ok {
		t.Error("arithmetic without figures")
	}
}

// TestWindowArithmeticUsesTheMeanRTT: the 19 ms / 622m lab's -w 256K
// test: a 340 KB window, 19.10 ms baseline, 19.52 ms mean, 136 Mbit/s
// over 2 s of which slow start took 0.40 s, 141 after it. The bound is
// the window over the mean RTT, and the steady rate is set beside it.
func TestWindowArithmeticUsesTheMeanRTT(t *testing.T) {
	df := &DirectionFigures{Streams: 1, GoodputBps: 136e6}
	df.MaxSndWnd, df.BaselineRTTus, df.MeanRTTus = 340_000, 19_100, 19_520
	df.SlowStart = &SlowStartFigures{Ended: true, End: 0.4, Share: 0.2, RateAfter: 141e6}
	w, ok := df.Window()
	if !ok {
		t.Fatal("no arithmetic")
	}
	if want := 340_000 * 8 / 0.01952; math.Abs(w.BoundBps-want) > 1e-6*want || w.RTT != w.MeanRTT || !w.Limited || w.SteadyBps != 141e6 {
		t.Fatalf("%+v, want bound %.0f over the mean RTT, steady 141e6, limited", w, want)
	}
	s := w.String()
	for _, want := range []string{"÷ 19.52 ms (mean; baseline 19.10 ms) = 139 Mbits/sec", "136 Mbits/sec (98%)", "141 Mbits/sec after slow start (101%)"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	// A slow start that never ended gives no steady rate; several
	// streams neither (their slow starts end apart).
	df.SlowStart = &SlowStartFigures{Share: 1}
	if w, _ := df.Window(); w.SteadyBps != 0 {
		t.Errorf("steady %v from a slow start that never ended", w.SteadyBps)
	}
	df.SlowStart = &SlowStartFigures{Ended: true, Share: 0.2, RateAfter: 141e6}
	df.Streams = 2
	if w, _ := df.Window(); w.SteadyBps != 0 || w.WindowBytes != 680_000 {
		t.Errorf("two streams: %+v", w)
	}
	// A mean below the baseline (none sampled) falls back to the baseline.
	df.Streams, df.MeanRTTus = 1, 0
	if w, _ := df.Window(); w.RTT != w.BaselineRTT || strings.Contains(w.String(), "mean") {
		t.Errorf("no mean: %+v", w)
	}
}
