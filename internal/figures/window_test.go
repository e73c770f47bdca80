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
