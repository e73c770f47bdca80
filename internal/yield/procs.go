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

// procsFor is how many Ps a process whose default is base wants while
// readers receiving loops run: one more than its readers once they fill
// its Ps, and at most twice the default.
func procsFor(base, readers int) int {
	return max(base, min(readers+1, 2*base))
}

// readerCount holds the running readers and fits GOMAXPROCS to them.
type readerCount struct {
	mu     sync.Mutex
	n      int
	base   int  // the default GOMAXPROCS, read before the first change
	raised bool // GOMAXPROCS is ours, not the runtime's default
}

var readers readerCount

// userProcs: GOMAXPROCS set in the environment is the user's, and kept.
var userProcs = os.Getenv("GOMAXPROCS") != ""

func (r *readerCount) add(d int) {
	if userProcs {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n += d
	if !r.raised {
		r.base = runtime.GOMAXPROCS(0)
	}
	switch want := procsFor(r.base, r.n); {
	case want > r.base && want != runtime.GOMAXPROCS(0):
		runtime.GOMAXPROCS(want)
		r.raised = true
	case want == r.base && r.raised:
		// Back to the runtime's own default, which then follows the
		// CPU limit again.
		runtime.SetDefaultGOMAXPROCS()
		r.raised = false
	}
}

// Readers is how many receiving data loops run in this process now.
func Readers() int {
	readers.mu.Lock()
	defer readers.mu.Unlock()
	return readers.n
}
