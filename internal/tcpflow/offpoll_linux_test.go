package tcpflow

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/tcpinfo"
	"github.com/wireperf/wireperf/internal/yield"
)

// inEpollSet reports whether the socket behind rc is registered with an
// epoll instance of this process (Go's poller is the only one), from the
// kernel's own list: /proc/self/fdinfo of each eventpoll descriptor names
// the inode of every file it watches.
func inEpollSet(t *testing.T, rc syscall.RawConn) bool {
	t.Helper()
	var st syscall.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil || serr != nil {
		t.Fatalf("fstat of the socket: %v %v", err, serr)
	}
	want := fmt.Sprintf("ino:%x ", st.Ino)
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	epolls := 0
	for _, p := range fds {
		if l, err := os.Readlink(p); err != nil || l != "anon_inode:[eventpoll]" {
			continue
		}
		epolls++
		f, err := os.Open("/proc/self/fdinfo/" + filepath.Base(p))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "tfd:") && strings.Contains(sc.Text()+" ", want) {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	if epolls == 0 {
		t.Fatal("no eventpoll descriptor in /proc/self/fd: can't tell")
	}
	return false
}

// TestStreamOffPoller: once started, a stream's socket is no longer in
// Go's epoll set (it was before), the bytes still arrive exactly, and
// TCP_INFO still reads through the stream.
func TestStreamOffPoller(t *testing.T) {
	a, b := tcpPair(t)
	tx := NewStream(1, true, a)
	rx := NewStream(1, false, b)
	for _, s := range []*Stream{tx, rx} {
		rc, _ := s.SyscallConn()
		if !inEpollSet(t, rc) {
			t.Fatal("before Start the socket is not in Go's epoll set: the check proves nothing")
		}
	}
	epoch := time.Now()
	const total = 5<<20 + 3
	rx.Start(epoch, make([]byte, 128<<10), nil)
	tx.Start(epoch, make([]byte, 128<<10), &countdown{left: total})
	for _, s := range []*Stream{tx, rx} {
		if !s.offPoller() {
			t.Fatalf("stream (sender %v) still on Go's poller", s.Sender)
		}
		rc, _ := s.SyscallConn()
		if inEpollSet(t, rc) {
			t.Errorf("stream (sender %v): socket still in Go's epoll set", s.Sender)
		}
	}
	<-tx.Done()
	<-rx.Done()
	if tx.Bytes() != total || rx.Bytes() != total || tx.Err() != nil || rx.Err() != nil {
		t.Fatalf("sent %d, received %d, want %d; errors %v %v", tx.Bytes(), rx.Bytes(), total, tx.Err(), rx.Err())
	}
	// The receiver has every byte, but its last ACK may still be on its
	// way to the sender: read TCP_INFO until it arrives, for 5 s at most.
	var info *tcpinfo.Info
	for deadline := time.Now().Add(5 * time.Second); ; {
		var err error
		if info, err = tcpinfo.FromConn(tx); err != nil {
			t.Fatalf("TCP_INFO through the stream: %v", err)
		}
		if info.BytesAcked >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // bounded poll: TCP_INFO until the last ACK, at most 5 s
	}
	if info.BytesAcked < total {
		t.Errorf("TCP_INFO says %d bytes acknowledged, want at least %d", info.BytesAcked, total)
	}
	for _, s := range []*Stream{tx, rx} {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if _, err := tcpinfo.FromConn(s); err == nil {
			t.Error("TCP_INFO read after Close")
		}
	}
}

// TestZeroCopyOffPoller: a -Z sender leaves Go's poller too, and its
// sendfile calls through its own descriptor deliver every byte, zeros.
func TestZeroCopyOffPoller(t *testing.T) {
	a, b := tcpPair(t)
	tx := NewStream(1, true, a)
	if err := tx.UseZeroCopy(128 << 10); err != nil {
		t.Fatal(err)
	}
	epoch := time.Now()
	const total = 3<<20 + 5
	tx.Start(epoch, make([]byte, 128<<10), &countdown{left: total})
	if !tx.offPoller() {
		t.Fatal("-Z sender still on Go's poller")
	}
	var got, nonzero int
	buf := make([]byte, 64<<10)
	for {
		n, err := b.Read(buf)
		got += n
		for _, c := range buf[:n] {
			if c != 0 {
				nonzero++
			}
		}
		if err != nil {
			break
		}
	}
	<-tx.Done()
	if tx.Err() != nil || tx.Bytes() != total || got != total || nonzero != 0 {
		t.Fatalf("sent %d, received %d (%d not zero), want %d; error %v", tx.Bytes(), got, nonzero, total, tx.Err())
	}
}

// TestBlockedStreamStopsAtDeadline: a sender blocked in write (the peer
// reads nothing) ends at Stop, and a receiver blocked in read with
// nothing coming ends at its deadline, both without an error, although
// their threads sleep in the kernel.
func TestBlockedStreamStopsAtDeadline(t *testing.T) {
	a, _ := tcpPair(t)
	tx := NewStream(1, true, a)
	epoch := time.Now()
	tx.Start(epoch, make([]byte, 1<<20), nil)
	// The peer never reads: the sender fills both buffers and blocks
	// (its count stops moving).
	for prev, until := int64(-1), time.Now().Add(5*time.Second); ; {
		if time.Now().After(until) {
			t.Fatal("the sender never blocked")
		}
		time.Sleep(50 * time.Millisecond) // bounded poll: the sender's count, until it stops moving or 5 s pass
		n := tx.Bytes()
		if n == prev && n > 0 {
			break
		}
		prev = n
	}
	tx.Stop(time.Now())
	waitDone(t, tx, "blocked sender at Stop")
	if tx.Err() != nil {
		t.Errorf("sender ended with %v", tx.Err())
	}

	_, d := tcpPair(t)
	rx := NewStream(2, false, d)
	rx.Start(epoch, make([]byte, 1<<16), nil)
	stopAt := time.Now().Add(100 * time.Millisecond)
	rx.Stop(stopAt)
	waitDone(t, rx, "idle receiver at its deadline")
	if time.Now().Before(stopAt) {
		t.Error("receiver ended before its deadline")
	}
	if rx.Err() != nil {
		t.Errorf("receiver ended with %v", rx.Err())
	}

	// Close while the loop is blocked ends it too.
	_, f := tcpPair(t)
	rx2 := NewStream(3, false, f)
	rx2.Start(epoch, make([]byte, 1<<16), nil)
	if err := rx2.Close(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, rx2, "blocked receiver at Close")
	for _, s := range []*Stream{tx, rx} {
		_ = s.Close()
	}
}

func waitDone(t *testing.T, s *Stream, what string) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the loop did not end", what)
	}
}

// TestLoneSenderDoesNotYield: a sender alone in the process never passes
// through the scheduler (each yield cost it a thread hop); two senders side
// by side each do, every yield.Every.
func TestLoneSenderDoesNotYield(t *testing.T) {
	if n := yield.Loops(); n != 0 {
		t.Fatalf("%d data loops already running", n)
	}
	for _, senders := range []int{1, 2} {
		var txs []*Stream
		epoch := time.Now()
		for i := range senders {
			a, b := tcpPair(t)
			go func() { _, _ = io.Copy(io.Discard, b) }()
			tx := NewStream(i+1, true, a)
			tx.Start(epoch, make([]byte, 128<<10), nil)
			txs = append(txs, tx)
		}
		// Long enough for several yields: each sender writes throughout.
		<-time.After(6 * yield.Every)
		for _, tx := range txs {
			tx.Stop(time.Now())
		}
		for _, tx := range txs {
			<-tx.Done()
			if tx.Err() != nil || tx.Bytes() == 0 {
				t.Fatalf("%d senders: sent %d, error %v", senders, tx.Bytes(), tx.Err())
			}
			switch y := tx.own.yield.Count(); {
			case senders == 1 && y != 0:
				t.Errorf("a lone sender yielded %d times in %v", y, time.Since(epoch))
			case senders > 1 && y == 0:
				t.Errorf("a sender beside %d others never yielded in %v", senders-1, time.Since(epoch))
			}
		}
	}
	if n := yield.Loops(); n != 0 {
		t.Errorf("%d data loops counted after every loop ended", n)
	}
}

// TestYieldPeriod: readers yield every yield.Every, a lone sender never,
// a sender beside other loops every sharedSendYield.
func TestYieldPeriod(t *testing.T) {
	for _, c := range []struct {
		reading bool
		loops   int32
		period  time.Duration
		ok      bool
	}{
		{true, 1, yield.Every, true},
		{true, 4, yield.Every, true},
		{false, 1, 0, false},
		{false, 0, 0, false},
		{false, 2, sharedSendYield, true},
		{false, 17, sharedSendYield, true},
	} {
		if p, ok := yieldPeriod(c.reading, c.loops); p != c.period || ok != c.ok {
			t.Errorf("yieldPeriod(reading %v, %d loops) = %v, %v; want %v, %v", c.reading, c.loops, p, ok, c.period, c.ok)
		}
	}
}

// lowWaterRig is a receiving stream on one end of a loopback pair, with
// the helpers the low-water tests share.
type lowWaterRig struct {
	t  *testing.T
	a  *net.TCPConn // the sending end, written by the test
	rx *Stream
}

// newLowWaterRig starts a receiver reading blocks of block bytes from a
// socket whose buffer is set to rcvbuf (the kernel doubles it), small
// enough for any rmem_max, so that autotuning does not decide the test.
func newLowWaterRig(t *testing.T, block, rcvbuf int) *lowWaterRig {
	a, b := tcpPair(t)
	if err := b.SetReadBuffer(rcvbuf); err != nil {
		t.Fatal(err)
	}
	r := &lowWaterRig{t: t, a: a, rx: NewStream(1, false, b)}
	r.rx.Start(time.Now(), make([]byte, block), nil)
	t.Cleanup(func() {
		_ = a.Close()
		<-r.rx.Done()
		_ = r.rx.Close()
	})
	return r
}

// mark is the socket's SO_RCVLOWAT.
func (r *lowWaterRig) mark() int {
	r.t.Helper()
	rc, _ := r.rx.SyscallConn()
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT) }); err != nil || gerr != nil {
		r.t.Fatalf("SO_RCVLOWAT: %v %v", err, gerr)
	}
	return v
}

// waitWithin polls ok every millisecond until it holds, and fails the
// test after limit.
func (r *lowWaterRig) waitWithin(limit time.Duration, what string, ok func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(limit); !ok(); {
		if time.Now().After(deadline) {
			r.t.Fatalf("not within %v: %s (received %d bytes, SO_RCVLOWAT %d)", limit, what, r.rx.Bytes(), r.mark())
		}
		time.Sleep(time.Millisecond) // bounded poll: ok(), until the deadline above
	}
}

func (r *lowWaterRig) waitFor(what string, ok func() bool) {
	r.t.Helper()
	r.waitWithin(5*time.Second, what, ok)
}

func (r *lowWaterRig) write(n int) {
	r.t.Helper()
	if _, err := r.a.Write(make([]byte, n)); err != nil {
		r.t.Fatal(err)
	}
}

// TestReceiverLowWater: once it has read its first bytes, a receiver
// whose buffer holds lowWaterBuffers blocks asks the kernel to wake it for
// whole blocks (SO_RCVLOWAT), and takes the mark off when data comes
// slower than a block per socket timeout. The sender's buffer holds
// every block written at once.
func TestReceiverLowWater(t *testing.T) {
	const block = 16 << 10
	r := newLowWaterRig(t, block, lowWaterBuffers*block)
	if err := r.a.SetWriteBuffer(16 * block); err != nil {
		t.Fatal(err)
	}
	// The first bytes: the next read sets the mark before it blocks. Had
	// the first read waited under the mark, it would have come back short
	// after the socket's timeout and taken the mark off for
	// lowWaterBackoff: a mark set sooner than that proves it did not.
	r.write(100)
	r.waitFor("the first bytes", func() bool { return r.rx.Bytes() == 100 })
	r.waitWithin(lowWaterBackoff/2, "the mark set after the first bytes", func() bool { return r.mark() == block })
	r.write(3 * block)
	r.waitFor("three blocks received", func() bool { return r.rx.Bytes() >= 100+3*block })
	// Less than a block: the read waits out the socket's timeout, returns
	// what came, and the mark comes off, before the bytes are counted.
	r.write(1000)
	r.waitFor("the last 1000 bytes", func() bool { return r.rx.Bytes() >= 100+3*block+1000 })
	if m := r.mark(); m != 1 {
		t.Errorf("SO_RCVLOWAT %d after a short read, want 1", m)
	}
	if got := r.rx.Bytes(); got != 100+3*block+1000 {
		t.Errorf("received %d bytes, want %d", got, 100+3*block+1000)
	}
}

// TestReceiverLowWaterBatch: a receiver whose buffer holds
// lowWaterBuffers larger marks, fed faster than the larger mark per
// lowWaterFill, raises its mark to lowWaterBatch blocks; fed one block
// every 10 ms it lowers it to one block again; and when the sender
// stops, the last read is cut short and the mark comes off, with every
// byte written counted. The larger mark needs a buffer of
// lowWaterBuffers × lowWaterBatch blocks: 192 KiB asked, within any
// rmem_max. The writers are bounded in bytes and time.
func TestReceiverLowWaterBatch(t *testing.T) {
	const block = 16 << 10
	const batch = lowWaterBatch * block
	r := newLowWaterRig(t, block, lowWaterBuffers*batch)
	var written atomic.Int64
	// write writes blocks, every gap (0: back to back), until stop is
	// closed, 10 s have passed, or 16 GiB are written.
	write := func(gap time.Duration, stop <-chan struct{}) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, block)
			end := time.Now().Add(10 * time.Second)
			_ = r.a.SetWriteDeadline(end) // a dead receiver can't hold the writer
			for i := 0; i < 1<<20 && time.Now().Before(end); i++ {
				select {
				case <-stop:
					return
				default:
				}
				n, err := r.a.Write(buf)
				written.Add(int64(n))
				if err != nil {
					return
				}
				if gap > 0 {
					select {
					case <-stop:
						return
					case <-time.After(gap):
					}
				}
			}
		}()
		return done
	}
	run := func(gap, limit time.Duration, what string, ok func() bool) {
		t.Helper()
		stop := make(chan struct{})
		done := write(gap, stop)
		defer func() { close(stop); <-done }()
		r.waitWithin(limit, what, ok)
	}
	run(0, 5*time.Second, "the larger mark", func() bool { return r.mark() == batch })
	// Lowered by the rate within a few looks, well before a short read's
	// back-off could bring the mark back to one block.
	run(10*time.Millisecond, lowWaterBackoff/2, "one block again at a block per 10 ms", func() bool { return r.mark() == block })
	// A tail of less than a block: the read waits out the socket's
	// timeout under the mark and comes back short.
	r.write(1000)
	n := written.Load() + 1000
	r.waitFor("every byte written", func() bool { return r.rx.Bytes() == n })
	r.waitFor("the mark off after the last, short, read", func() bool { return r.mark() == 1 })
}
