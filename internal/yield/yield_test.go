package yield

import (
	"testing"
	"time"
)

// TestAtPeriod: the first call yields; later calls yield only once the
// period has passed since the last yield, on the clock given.
func TestAtPeriod(t *testing.T) {
	var y Yielder
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		now  int64
		want int64 // yields so far
	}{
		{0, 1}, {ms / 2, 1}, {ms - 1, 1}, {ms, 2}, {ms + 1, 2}, {5 * ms, 3}, {6*ms - 1, 3}, {6 * ms, 4},
	} {
		y.AtPeriod(c.now, time.Millisecond)
		if y.Count() != c.want {
			t.Fatalf("at %v: %d yields, want %d", time.Duration(c.now), y.Count(), c.want)
		}
	}
	// At uses Every.
	var z Yielder
	z.At(0)
	z.At(int64(Every) - 1)
	z.At(int64(Every))
	if z.Count() != 2 {
		t.Errorf("At: %d yields over one Every, want 2", z.Count())
	}
}

// TestLoops: Enter and Leave count the running loops.
func TestLoops(t *testing.T) {
	base := Loops()
	Enter()
	Enter()
	if Loops() != base+2 {
		t.Fatalf("%d loops after two Enters, want %d", Loops(), base+2)
	}
	Leave()
	Leave()
	if Loops() != base {
		t.Errorf("%d loops after both left, want %d", Loops(), base)
	}
}
