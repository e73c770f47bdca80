// Package yield is the rule by which a data loop that makes its own
// system calls, out of Go's poller (UDP's and TCP's), passes through the
// scheduler now and then.
package yield

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Every is how often a send or receive loop passes through Go's
// scheduler: under its 10 ms preemption period (the monitor samples at
// most every 10 ms, so a yield every 8 ms is always seen).
const Every = 8 * time.Millisecond

// Yielder lets a goroutine that runs a tight loop of system calls on a
// locked thread pass through the scheduler now and then. Go's monitor
// thread takes the P away from a goroutine that has not been scheduled
// anew for 10 ms whenever it finds it in a system call, although it
// returns within microseconds: the goroutine's thread must then find
// another P, which wakes the monitor, which then polls every 20 µs for a
// while. A sender or a receiver woken thousands of times a second paid
// that (~5,000 monitor wake-ups a second) for nothing; one Gosched every
// few milliseconds costs a few hundred switches a second instead.
type Yielder struct {
	next int64
	n    int64 // yields so far
}

// At yields if the last yield was Every or more before now (ns on
// any clock that only moves forward).
func (y *Yielder) At(now int64) { y.AtPeriod(now, Every) }

// AtPeriod yields if the last yield was period or more before now.
func (y *Yielder) AtPeriod(now int64, period time.Duration) {
	if now < y.next {
		return
	}
	y.next = now + int64(period)
	y.n++
	runtime.Gosched()
}

// Count is how many times the loop has yielded; only the loop's own
// goroutine may read it while the loop runs.
func (y *Yielder) Count() int64 { return y.n }

// loops counts the data loops running in this process, TCP's and UDP's:
// whether a loop is alone decides whether it need yield at all.
var loops atomic.Int32

// Enter counts a data loop as running, and a receiving one as a reader
// (procs.go); Leave, once it has ended.
func Enter(reading bool) {
	loops.Add(1)
	if reading {
		readers.add(1)
	}
}

// Leave ends what Enter began.
func Leave(reading bool) {
	loops.Add(-1)
	if reading {
		readers.add(-1)
	}
}

// Loops is how many data loops run in this process now.
func Loops() int32 { return loops.Load() }
