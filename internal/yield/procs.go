package yield

import (
	"os"
	"runtime"
	"sync"
)

// A receiving data loop spends its life in blocking reads, each of which
// hands the goroutine's P back to the runtime when the monitor finds it
// blocked. When as many readers run as there are Ps, a reader whose read
// returns often finds every P taken (by the other readers' threads, the
// control connection, a timer) and parks its thread until one frees:
// two readers at -l 128K moved 8-15% more with one P more than CPUs.
// Senders are left out: a spare P lets a sender's yield wake another
// thread, which takes the goroutine over to the other CPU, and two
// senders with a spare P moved 9% less. See bench/RESULTS.md.

// procsFor is how many Ps a process that had base Ps wants while readers
// receiving loops run: one more than its readers once they fill its Ps,
// and at most twice base.
func procsFor(base, readers int) int {
	return max(base, min(readers+1, 2*base))
}

// readerCount holds the running readers and fits GOMAXPROCS to them. It
// raises GOMAXPROCS only above what it finds, and puts back only a value
// it set itself, so that it composes with other code that sets it (the
// lab's router raises it for its own threads as it starts, before any
// test; rr lowers it to 1 while no data loop runs). That code does not
// take mu: a change made at the same moment as a reader's start or end
// could be undone.
type readerCount struct {
	mu   sync.Mutex
	n    int
	base int // GOMAXPROCS as found before raising it
	set  int // the value this set, while it stands; 0: none
}

var readers readerCount

// userProcs: GOMAXPROCS set in the environment is the user's, and kept.
var userProcs = os.Getenv("GOMAXPROCS") != ""

// defaultProcs is the runtime's own choice, read before main runs.
var defaultProcs = runtime.GOMAXPROCS(0)

func (r *readerCount) add(d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n += d
	if userProcs {
		return
	}
	cur := runtime.GOMAXPROCS(0)
	if r.set != cur {
		r.set, r.base = 0, cur // never raised, or set by other code since: theirs
	}
	switch want := procsFor(r.base, r.n); {
	case want > cur:
		runtime.GOMAXPROCS(want)
		r.set = want
	case r.set != 0 && want < cur:
		if want == defaultProcs {
			// The runtime's default again, which then follows the CPU
			// limit (and may differ from want if that limit changed).
			runtime.SetDefaultGOMAXPROCS()
		} else {
			runtime.GOMAXPROCS(want)
		}
		r.set = 0
		if want != r.base {
			r.set = want
		}
	}
}

// runningReaders is how many receiving data loops run in this process now.
func runningReaders() int {
	readers.mu.Lock()
	defer readers.mu.Unlock()
	return readers.n
}
