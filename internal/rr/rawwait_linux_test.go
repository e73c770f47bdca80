//go:build linux

package rr

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// A read that waits as a raw system call keeps its goroutine's P, which
// the runtime cannot take back. With a single P, the runtime's
// preemption signal must end the read (EINTR: SO_RCVTIMEO is set) and
// the read must yield, so that another goroutine runs and a whole GC
// cycle completes while the read still waits for its datagram.
func TestRawWaitLetsGCRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	c, s := udpPair(t)
	e, err := newEndpoint(c, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.release()
	// The whole wait raw, bounded: if the read never yielded, nothing
	// else could run until its 20 s timeout, and the test would see it.
	e.rawHold = time.Minute
	type got struct {
		n   int
		err error
	}
	started := make(chan struct{}, 1)
	read := make(chan got, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		started <- struct{}{}
		n, _, err := e.recv(make([]byte, 128), 20*time.Second)
		read <- got{n, err}
	}()
	<-started // with one P, this goroutine runs again only once the reader has let the P go
	gcDone := make(chan uint32, 1)
	go func() {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		gcDone <- after.NumGC - before.NumGC
	}()
	select {
	case n := <-gcDone:
		if n == 0 {
			t.Fatal("runtime.GC returned without a cycle")
		}
	case r := <-read:
		t.Fatalf("the read returned (%d, %v) before the GC cycle finished", r.n, r.err)
	case <-time.After(15 * time.Second):
		t.Fatal("no GC cycle within 15 s while a raw read waited")
	}
	select {
	case r := <-read:
		t.Fatalf("the read returned (%d, %v) with nothing sent", r.n, r.err)
	default:
	}
	if _, err := s.Write(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	if r := <-read; r.err != nil || r.n != 64 {
		t.Fatalf("the read after the GC: %d bytes, %v; want the 64-byte datagram", r.n, r.err)
	}
}

// The raw part of a wait lasts rawHold; the rest of the timeout goes on
// as an ordinary system call, and the next wait is raw again, SO_RCVTIMEO
// set back to rawHold.
func TestRawWaitThenOrdinary(t *testing.T) {
	if rawWaiters.Load() != 0 {
		t.Fatalf("%d raw slots held before the test", rawWaiters.Load())
	}
	c, s := udpPair(t)
	e, err := newEndpoint(c, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.release()
	if runtime.GOMAXPROCS(0) < 2 {
		if e.rawHold != 0 {
			t.Fatalf("raw waits with a single P: rawHold %v", e.rawHold)
		}
		t.Skip("one P: no raw waits")
	}
	if e.rawHold != rawWait {
		t.Fatalf("rawHold %v, want %v", e.rawHold, rawWait)
	}
	start := time.Now()
	if _, _, err := e.recv(make([]byte, 128), 20*time.Millisecond); !errors.Is(err, errTimeout) {
		t.Fatalf("recv on an empty socket: %v, want a timeout", err)
	}
	if waited := time.Since(start); waited < 19*time.Millisecond {
		t.Fatalf("the timeout came after %v, before the 20 ms asked", waited)
	}
	if want := 20*time.Millisecond - rawWait; e.timeout != want {
		t.Fatalf("SO_RCVTIMEO after the raw part: %v, want the remainder %v", e.timeout, want)
	}
	if _, err := s.Write(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := e.recv(make([]byte, 128), time.Second); err != nil || n != 64 {
		t.Fatalf("recv: %d, %v", n, err)
	}
	if e.timeout != rawWait {
		t.Fatalf("SO_RCVTIMEO %v after a raw read, want %v", e.timeout, rawWait)
	}
}

// At most GOMAXPROCS − 1 of a server's endpoints wait raw at a time, a
// prober's may take the last P, and none goes past GOMAXPROCS; release
// frees the slot for the next.
func TestRawSlotsLeaveOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	if rawWaiters.Load() != 0 {
		t.Fatalf("%d raw slots held before the test", rawWaiters.Load())
	}
	var es []*endpoint
	for range 3 {
		c, _ := udpPair(t)
		e, err := newEndpoint(c, false, false, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.release) // after a failed check; a second release is harmless
		es = append(es, e)
	}
	if es[0].rawHold == 0 || es[1].rawHold == 0 || es[2].rawHold != 0 {
		t.Fatalf("raw holds %v %v %v with 3 Ps, want two", es[0].rawHold, es[1].rawHold, es[2].rawHold)
	}
	es[0].release()
	c, _ := udpPair(t)
	e, err := newEndpoint(c, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.release)
	if e.rawHold == 0 {
		t.Fatal("a released slot was not given to the next endpoint")
	}
	c, _ = udpPair(t)
	busy, err := newEndpoint(c, false, true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(busy.release)
	if busy.rawHold != 0 || busy.rawSlot {
		t.Fatal("a busy-polling endpoint took a raw slot")
	}
	// The third, a prober's, may take the last P; then none is left.
	if es[2].waitRaw(0); es[2].rawHold != rawWait {
		t.Fatal("a prober's endpoint was refused the last P")
	}
	c, _ = udpPair(t)
	late, err := newEndpoint(c, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(late.release)
	if late.waitRaw(0); late.rawHold != 0 {
		t.Fatal("a raw slot beyond GOMAXPROCS")
	}
	for _, x := range []*endpoint{es[1], es[2], e, busy, late} {
		x.release()
	}
	if n := rawWaiters.Load(); n != 0 {
		t.Fatalf("%d raw slots held after every release", n)
	}
}

// reflectedProber is a UDP prober with a reflector on loopback, both
// stopped when the test ends.
func reflectedProber(t *testing.T) *Prober {
	t.Helper()
	c, s := udpPair(t)
	r := NewReflector(ReflectorConfig{MaxRequest: 1472, MaxResponse: 1472})
	r.Go(func() error { return r.ServeUDP(s) })
	t.Cleanup(func() { r.Stop(); r.Wait() })
	p, err := NewProber(c, ProberConfig{Mode: ModeUDP, MaxRequest: 1472, MaxResponse: 1472})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// A back-to-back UDP transaction allocates nothing, on either end: the
// prober's send, wait, stamps (read a batch at a time) and figures, and
// the reflector's turn-around
// (testing.AllocsPerRun counts the whole process).
func TestTransactionAllocatesNothing(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := reflectedProber(t)
	acc := newAccumulator("", 64, 64)
	var failed error
	allocs := testing.AllocsPerRun(50, func() {
		if err := p.transaction(acc, nil, 5*time.Second); err != nil && failed == nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	p.recordStamped() // the transactions still held for their send stamps
	if acc.completed != 51 || acc.lost != 0 {
		t.Fatalf("%d transactions completed, %d lost, want 51 and 0", acc.completed, acc.lost)
	}
	if allocs != 0 {
		t.Fatalf("%.1f allocations per transaction, want 0", allocs)
	}
}

// Nor does the loop between transactions: a thousand back-to-back
// transactions cost a point's few allocations, not one each (a
// transaction's error target was a heap object a transaction).
func TestLockstepAllocatesNothingPerTransaction(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := reflectedProber(t)
	const n = 1000
	accs := []*accumulator{newAccumulator("", 64, 64)}
	sel := &planSelector{plans: []Plan{{Request: 64, Response: 64, Count: n}}}
	// Counted across the process (the reflector allocates nothing
	// either), not with testing.AllocsPerRun, whose single P would make
	// each transaction wait for the runtime to preempt the prober's raw
	// wait before the reflector could run.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := p.lockstep(sel, accs)
	p.recordStamped() // as run does after lockstep
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	allocs := after.Mallocs - before.Mallocs
	if got := accs[0].completed + accs[0].lost; got != n {
		t.Fatalf("%d transactions, want %d", got, n)
	}
	// newAccumulator's histograms and maps are a few dozen; one a
	// transaction would be over a thousand.
	if allocs > 100 {
		t.Fatalf("%d allocations for %d transactions, want a point's few", allocs, n)
	}
}

// A lockstep prober waits raw even on a single P (the rr command's
// client runs with one); an isochronous UDP prober, whose reader and
// sender are two goroutines, never does.
func TestProberRawWaits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, tc := range []struct {
		interval time.Duration
		want     time.Duration
	}{{0, rawWait}, {10 * time.Millisecond, 0}} {
		c, _ := udpPair(t)
		p, err := NewProber(c, ProberConfig{Mode: ModeUDP, Interval: tc.interval, MaxRequest: 64, MaxResponse: 64})
		if err != nil {
			t.Fatal(err)
		}
		got := p.e.rawHold
		p.Close()
		if got != tc.want {
			t.Errorf("interval %v: raw wait %v, want %v", tc.interval, got, tc.want)
		}
	}
	if n := rawWaiters.Load(); n != 0 {
		t.Fatalf("%d raw slots held after Close", n)
	}
}

// A paced reflector's loop (requests on an --interval schedule) waits as
// ordinary system calls: its slot is given back as the loop starts.
func TestPacedReflectorWaitsOrdinarily(t *testing.T) {
	// Ps enough that the prober's slot and the reflector's do not
	// depend on which of the two is set up first.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, paced := range []bool{false, true} {
		c, s := udpPair(t)
		r := NewReflector(ReflectorConfig{MaxRequest: 64, MaxResponse: 64, Paced: paced})
		r.Go(func() error { return r.ServeUDP(s) })
		p, err := NewProber(c, ProberConfig{Mode: ModeUDP, MaxRequest: 64, MaxResponse: 64, NoWarmup: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Run([]Plan{{Request: 64, Response: 64, Count: 20}}); err != nil {
			t.Fatal(err)
		}
		// The reflector's loop is waiting now (it answered all 20);
		// the prober holds one slot, the reflector one unless paced.
		held := rawWaiters.Load()
		p.Close()
		r.Stop()
		r.Wait()
		if want := map[bool]int32{false: 2, true: 1}[paced]; held != want {
			t.Errorf("paced %v: %d raw slots held during the run, want %d", paced, held, want)
		}
	}
}
