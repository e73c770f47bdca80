package figures

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// Figures that used to mislead: each case is a report line a test on
// loopback or a short test printed.

func TestBufferDelayNeedsAPathsBaseline(t *testing.T) {
	// Loopback: the kernel's minimum RTT reads 1 µs, and 277 µs over it
	// would be a Buffer Delay of 27600%.
	if d, ok := BufferDelay(277*time.Microsecond, time.Microsecond); ok {
		t.Errorf("BufferDelay(277us, 1us) = %.1f%%; want none: 1 µs is no path's RTT", d)
	}
	if _, ok := BufferDelay(277*time.Microsecond, MinBufferDelayBaseline-time.Microsecond); ok {
		t.Errorf("BufferDelay over a baseline below %v was given", MinBufferDelayBaseline)
	}
	if d, ok := BufferDelay(300*time.Microsecond, 200*time.Microsecond); !ok || !near(d, 50, 1e-9) {
		t.Errorf("BufferDelay(300us, 200us) = %v, %v; want 50%%", d, ok)
	}
	st := &result.TCPStats{BaselineRTTus: 1, MeanRTTus: 277, BytesSent: 1}
	if f := FiguresOf(&result.Stream{TCPStats: st}); f.BufferDelayPercent != nil {
		t.Errorf("FiguresOf a loopback stream: Buffer Delay %v%%", *f.BufferDelayPercent)
	}
}

func TestSlowStartEnds(t *testing.T) {
	for _, tc := range []struct {
		first, last float64
		want        string
	}{
		{0.1, 0.1, "at 0.10 s in every stream"},
		{0.101, 0.104, "at 0.10 s in every stream"}, // not "0.10-0.10 s"
		{0.1, 0.25, "at 0.10-0.25 s across the streams"},
		{0, 0, ""},
	} {
		df := &DirectionFigures{SlowStartFirst: tc.first, SlowStartLast: tc.last}
		if got := df.SlowStartEnds(); got != tc.want {
			t.Errorf("SlowStartEnds(%v, %v) = %q; want %q", tc.first, tc.last, got, tc.want)
		}
	}
}
