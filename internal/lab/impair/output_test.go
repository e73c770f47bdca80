package impair

import (
	"testing"
	"time"
)

// TestOutputKeepsTheRateAfterAStall: a router that stops for 50 ms (a
// busy host descheduled it) finds a backlog due at once. Released in one
// burst, it would carry 50 ms of the rate in an instant, and a window
// around the stall more than the path can. The output line keeps the
// rate instead: over every 100 ms window, at most the rate plus one
// OutputBurst, and the late departures are counted.
func TestOutputKeepsTheRateAfterAStall(t *testing.T) {
	const size = 1500
	cfg := Config{Rate: 100e6, QueueLimit: 1 << 20, Delay: 5 * time.Millisecond}
	d, err := NewDirection[int](cfg, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	type sent struct{ at, bytes int64 }
	var outs []sent
	var now int64
	emit := func(_ int, copies int) { outs = append(outs, sent{now, int64(copies * size)}) }
	gap := int64(size * 8 * 1e9 / 100e6) // arrivals at the rate: 120 µs
	stallFrom, stallTo := int64(200*time.Millisecond), int64(250*time.Millisecond)
	end := int64(600 * time.Millisecond)
	step := int64(20 * time.Microsecond) // the writer's wake-ups
	next := int64(0)
	for now = 0; now < end+int64(50*time.Millisecond); now += step {
		for next <= now && next < end {
			if d.Arrive(next, 0, size) != Queued {
				t.Fatalf("dropped at %d", next)
			}
			next += gap
		}
		if now >= stallFrom && now < stallTo {
			continue // the router does not run
		}
		d.Release(now, emit)
	}
	for _, o := range outs {
		if o.at >= stallFrom && o.at < stallTo {
			t.Fatalf("a packet left at %d, inside the stall", o.at)
		}
	}
	limit := int64(100e6*0.1/8) + OutputBurst + size
	j := 0
	var inWindow int64
	for i := range outs {
		inWindow += outs[i].bytes
		for outs[i].at-outs[j].at >= int64(100*time.Millisecond) {
			inWindow -= outs[j].bytes
			j++
		}
		if inWindow > limit {
			t.Fatalf("%d bytes left within 100 ms ending at %d: more than the rate's %d plus one burst", inWindow, outs[i].at, int64(100e6*0.1/8))
		}
	}
	c := d.Counters()
	if c.ReleasedLate == 0 || c.MaxLateUs < 40_000 {
		t.Errorf("the stall's late departures: %d, worst %d µs", c.ReleasedLate, c.MaxLateUs)
	}
	// The line stood idle 50 ms with packets due and caught up one burst
	// (5.2 ms at 100 Mbit/s): the rest is lost output, and counted.
	if burst := int64(OutputBurst) * 8 * 1e6 / 100e6; c.OutputLostUs < uint64(50_000-burst-500) || c.OutputLostUs > uint64(50_000-burst+500) {
		t.Errorf("output lost %d µs, want about %d", c.OutputLostUs, 50_000-burst)
	}
	if !c.Balanced() || c.Out != c.In {
		t.Errorf("counters %+v", c)
	}
}

// TestOutputOnTimeAddsNothing: a router that keeps up releases every
// packet at its own time; the output line adds no delay and counts
// nothing late.
func TestOutputOnTimeAddsNothing(t *testing.T) {
	cfg := Config{Rate: 8e6, QueueLimit: 1 << 20, Overhead: 38}
	outs, _, c := sim(t, cfg, 1, make([]int64, 20), 1000)
	for i, o := range outs {
		if want := int64(i+1) * 1038_000; o.at != want {
			t.Fatalf("packet %d left at %d, want %d", i, o.at, want)
		}
	}
	if c.ReleasedLate != 0 {
		t.Errorf("%d counted late", c.ReleasedLate)
	}
}
