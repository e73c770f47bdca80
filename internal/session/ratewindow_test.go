package session

import (
	"testing"
	"time"
)

// The rate is read over the last window only, once a full window has
// passed: a burst that has left the window no longer counts.
func TestRateWindow(t *testing.T) {
	w := &rateWindow{window: time.Second}
	s := time.Second / 4
	steps := []struct {
		at       time.Duration
		bytes    int64
		wantBps  float64
		wantFull bool
	}{
		{s, 1e6, 0, false},
		{2 * s, 2e6, 0, false},
		{3 * s, 3e6, 0, false},
		{4 * s, 4e6, 32e6, true}, // 4 MB in the first second
		{5 * s, 4e6, 24e6, true}, // 0.25 s to 1.25 s: 3 MB
		{8 * s, 4e6, 0, true},    // nothing moved for a second
		{9 * s, 4e6 + 125e3, 1e6, true},
	}
	for _, st := range steps {
		bps, full := w.add(st.at, st.bytes)
		if full != st.wantFull || bps != st.wantBps {
			t.Errorf("at %v with %d bytes: %v bit/s, full %v; want %v, %v", st.at, st.bytes, bps, full, st.wantBps, st.wantFull)
		}
	}
	if len(w.samples) > 6 {
		t.Errorf("%d samples kept for a one-second window read every 250 ms", len(w.samples))
	}
	if got := (&rateWindow{window: 5 * time.Second}).tick(); got != time.Second {
		t.Errorf("tick of a 5 s window: %v, want 1s", got)
	}
}
