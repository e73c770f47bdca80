package mcast

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/iperf2wire"
)

func TestFrameAcct(t *testing.T) {
	a := newFrameAcct()
	t0 := time.Unix(1_800_000_000, 0)
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	frame := func(prev, id, size, remaining uint32) iperf2wire.Isoch {
		return iperf2wire.Isoch{PrevFrame: prev, Frame: id, BurstSize: size, Remaining: remaining}
	}
	// Frame 1: two datagrams, whole, 3 ms from its first send to its last arrival.
	a.add(frame(0, 1, 2000, 2000), 1000, ms(0), ms(1))
	a.add(frame(0, 1, 2000, 1000), 1000, ms(0.5), ms(3))
	// Frame 2: one of its two datagrams lost.
	a.add(frame(1, 2, 2000, 2000), 1000, ms(10), ms(11))
	// Frames 3 and 4 skipped by the sender (it numbers the next 5, after 2).
	a.add(frame(2, 5, 1000, 1000), 1000, ms(40), ms(45))
	st := a.final()
	want := FrameStats{Frames: 3, Complete: 2, Incomplete: 1, Skipped: 2, LatencyMinMs: 3, LatencyMeanMs: 4, LatencyMaxMs: 5, JitterMs: 2.0 / 16}
	if st != want {
		t.Errorf("got  %+v\nwant %+v", st, want)
	}
}

func TestFrameAcctBounded(t *testing.T) {
	a := newFrameAcct()
	t0 := time.Unix(1_800_000_000, 0)
	for id := uint32(1); id <= 1000; id++ { // every frame loses its second half
		a.add(iperf2wire.Isoch{PrevFrame: id - 1, Frame: id, BurstSize: 2000, Remaining: 2000}, 1000, t0, t0)
		if len(a.open) > maxOpenFrames {
			t.Fatalf("%d frames open", len(a.open))
		}
	}
	a.add(iperf2wire.Isoch{PrevFrame: 1, Frame: 2, BurstSize: 2000, Remaining: 1000}, 1000, t0, t0) // a straggler of a judged frame
	if st := a.final(); st.Frames != 1000 || st.Incomplete != 1000 || st.Complete != 0 {
		t.Errorf("%+v: want 1000 frames, all incomplete", st)
	}
}
