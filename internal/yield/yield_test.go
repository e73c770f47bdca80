package yield

import (
	"runtime"
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
	Enter(false)
	Enter(false)
	if Loops() != base+2 {
		t.Fatalf("%d loops after two Enters, want %d", Loops(), base+2)
	}
	Leave(false)
	Leave(false)
	if Loops() != base {
		t.Errorf("%d loops after both left, want %d", Loops(), base)
	}
}

// TestProcsFor: a P more than the readers once they fill the default,
// never fewer than the default, never more than twice it.
func TestProcsFor(t *testing.T) {
	for _, c := range []struct{ base, readers, want int }{
		{2, 0, 2}, {2, 1, 2}, {2, 2, 3}, {2, 3, 4}, {2, 40, 4},
		{8, 2, 8}, {8, 8, 9}, {8, 100, 16},
		{1, 0, 1}, {1, 1, 2}, {1, 5, 2},
	} {
		if got := procsFor(c.base, c.readers); got != c.want {
			t.Errorf("procsFor(%d, %d readers) = %d, want %d", c.base, c.readers, got, c.want)
		}
	}
}

// TestReadersFitProcs: readers raise GOMAXPROCS as procsFor says, and
// the runtime's default comes back when they end.
func TestReadersFitProcs(t *testing.T) {
	if userProcs {
		t.Skip("GOMAXPROCS is set in the environment, and kept")
	}
	base := runtime.GOMAXPROCS(0)
	if runningReaders() != 0 {
		t.Fatalf("%d readers already running", runningReaders())
	}
	Enter(false)
	Enter(false)
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Errorf("two senders: GOMAXPROCS %d, want the default %d", got, base)
	}
	for i := 1; i <= base+1; i++ {
		Enter(true)
		if got, want := runtime.GOMAXPROCS(0), procsFor(base, i); got != want {
			t.Errorf("%d readers: GOMAXPROCS %d, want %d", i, got, want)
		}
	}
	if runtime.GOMAXPROCS(0) == base {
		t.Error("readers beyond the default never raised GOMAXPROCS: the test proves nothing")
	}
	for range base + 1 {
		Leave(true)
	}
	Leave(false)
	Leave(false)
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Errorf("after every reader left: GOMAXPROCS %d, want the default %d", got, base)
	}
	if runningReaders() != 0 || Loops() != 0 {
		t.Errorf("%d readers, %d loops after all left", runningReaders(), Loops())
	}
}

// TestReadersComposeWithOtherProcs: readers never lower a GOMAXPROCS
// that other code set (the lab's router raises it for its threads), and
// put back what they found, not the runtime's default, when they end.
func TestReadersComposeWithOtherProcs(t *testing.T) {
	if userProcs {
		t.Skip("GOMAXPROCS is set in the environment, and kept")
	}
	orig := runtime.GOMAXPROCS(0)
	defer runtime.SetDefaultGOMAXPROCS()
	// Raised by other code before the readers start: a P more than the
	// readers is already there, and stays.
	high := orig + 4
	runtime.GOMAXPROCS(high)
	for range orig + 1 {
		Enter(true)
	}
	if got := runtime.GOMAXPROCS(0); got != high {
		t.Errorf("readers under another's %d: GOMAXPROCS %d", high, got)
	}
	for range orig + 1 {
		Leave(true)
	}
	if got := runtime.GOMAXPROCS(0); got != high {
		t.Errorf("after the readers under another's %d: GOMAXPROCS %d", high, got)
	}
	// Set by other code while readers run: theirs, and not put back.
	runtime.GOMAXPROCS(orig)
	for range orig {
		Enter(true)
	}
	if runtime.GOMAXPROCS(0) != procsFor(orig, orig) {
		t.Fatalf("%d readers: GOMAXPROCS %d, want %d", orig, runtime.GOMAXPROCS(0), procsFor(orig, orig))
	}
	other := orig + 7
	runtime.GOMAXPROCS(other)
	for range orig {
		Leave(true)
	}
	if got := runtime.GOMAXPROCS(0); got != other {
		t.Errorf("set to %d by other code while readers ran: GOMAXPROCS %d after they left", other, got)
	}
	// Lowered by other code (rr's one P): readers raise from there and
	// put it back.
	runtime.GOMAXPROCS(1)
	Enter(true)
	if got := runtime.GOMAXPROCS(0); got != procsFor(1, 1) {
		t.Errorf("a reader over 1 P: GOMAXPROCS %d, want %d", got, procsFor(1, 1))
	}
	Leave(true)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("after a reader over 1 P: GOMAXPROCS %d, want 1", got)
	}
}
