package flowrun

import (
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpflow"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// kernelCounts are what the kernel counted on a TCP stream, as the rows
// report them. A receiver's reads say when the reader ran, not when the
// network delivered: a reader that was descheduled drains its socket
// buffer (up to tcp_rmem's 32 MiB) in one burst, and a row cut on its
// reads shows a rate the path cannot carry. tcpi_bytes_received counts
// bytes as TCP takes them in, in order, whoever reads them and when. On a
// sender, tcpi_bytes_acked is what reached the receiver, where its writes
// only filled its socket buffer.
//
// Both counters include what the connection carried before the test (the
// data connection's hello); base removes it. Where the kernel reports
// neither (not Linux), ok stays false and the reads count.
type kernelCounts struct {
	mu   sync.Mutex
	ok   bool
	base uint64 // the counter's value at the test's byte zero
	last int64  // the latest count, less base
	// prevApp and prevAcked are the reads' and the acknowledgements'
	// counts at the previous cut.
	prevApp   int64
	prevAcked int64
	// ooo is the latest count of segments that arrived out of order, and
	// prevOOO its value at the previous cut.
	ooo, prevOOO uint32
	// hold estimates the bytes held out of order at the last cut
	// (ooo.go); cutC, cutSegs and cutOOO are the in-order count, data
	// segments and out-of-order segments at that cut.
	hold    heldOutOfOrder
	cutC    int64
	cutSegs uint32
	cutOOO  uint32
	settled bool // the stream is over: the hold stays empty
	// lastArrival is when the kernel last took in data, since the epoch
	// (settleReceiver); 0 until known.
	lastArrival time.Duration
}

// arrival is lastArrival, under the lock.
func (k *kernelCounts) arrival() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastArrival
}

// begin fixes the base before the stream starts. A receiver's counter
// already holds the hello and whatever test data arrived early; the
// early data waits unread in the socket, so base is the counter less the
// unread bytes. A sender's base is everything written before the test.
func (k *kernelCounts) begin(s *tcpflow.Stream) {
	rc, err := s.SyscallConn()
	if err != nil {
		return
	}
	info, err := tcpinfo.Get(rc)
	if err != nil {
		return
	}
	if s.Sender {
		k.base = info.BytesSent - min(info.BytesSent, info.BytesRetrans) + uint64(info.NotsentBytes)
		k.ok = true
		return
	}
	info, k.base, err = receiverBase(func() (int, error) { return tcpinfo.Queued(rc) }, func() (*tcpinfo.Info, error) { return tcpinfo.Get(rc) })
	if err != nil {
		return
	}
	k.ooo, k.prevOOO = info.RcvOOOPack, info.RcvOOOPack
	k.cutSegs, k.cutOOO = info.DataSegsIn, info.RcvOOOPack
	k.ok = true
}

// receiverBase is a receiving socket's bytes read before the test (the
// hello): its count of bytes received less what waits unread, both at
// one instant. Nothing reads the socket yet, but data may arrive between
// the two reads and count in the second only; the unread count taken on
// both sides of the counter says whether it did, and the reads are taken
// again until it did not (at most 100 times).
func receiverBase(queued func() (int, error), get func() (*tcpinfo.Info, error)) (*tcpinfo.Info, uint64, error) {
	for try := 0; ; try++ {
		before, err := queued()
		if err != nil {
			return nil, 0, err
		}
		info, err := get()
		if err != nil {
			return nil, 0, err
		}
		after, err := queued()
		if err != nil {
			return nil, 0, err
		}
		if before == after || try == 100 {
			return info, info.BytesReceived - min(info.BytesReceived, uint64(after)), nil
		}
	}
}

// received is a receiver's bytes taken in since the base, with those
// held out of order at the last cut (ooo.go); its reads' count where the
// kernel does not say. The in-order count never goes backwards, and
// never reads less than the reader has read (the two differ by what
// waits unread).
func (k *kernelCounts) received(s *tcpflow.Stream) int64 {
	app := s.Bytes()
	if !k.ok {
		return app
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.read(s)
	k.last = max(k.last, app)
	return k.last + k.hold.held
}

// read takes the kernel's in-order count; the caller holds k.mu.
func (k *kernelCounts) read(s *tcpflow.Stream) *tcpinfo.Info {
	info, err := tcpinfo.FromConn(s)
	if err != nil {
		return nil
	}
	var after *tcpinfo.Info
	if !finReceived(info.State) {
		after, _ = tcpinfo.FromConn(s)
	}
	got := dataReceived(info, after)
	if got >= k.base {
		k.last = max(k.last, int64(got-k.base))
	}
	k.ooo = max(k.ooo, info.RcvOOOPack)
	return info
}

// cutReceiver updates the out-of-order hold at an interval cut, from the
// counters' changes since the previous cut. The runner calls it before it
// reads the cut's bytes.
func (k *kernelCounts) cutReceiver(s *tcpflow.Stream) {
	if !k.ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	info := k.read(s)
	if info == nil || k.settled {
		return
	}
	mss := int64(info.RcvMSS)
	if mss <= 0 {
		mss = int64(info.AdvMSS)
	}
	if k.hold.cut(k.last-k.cutC, info.DataSegsIn-k.cutSegs, info.RcvOOOPack-k.cutOOO, mss) > 0 {
		if rc, err := s.SyscallConn(); err == nil {
			// Unread first: bytes arriving between the two reads then
			// loosen the bound rather than tighten it below the truth.
			queued, qerr := tcpinfo.Queued(rc)
			mem, merr := tcpinfo.ReceiveMemory(rc)
			if merr == nil && qerr == nil {
				k.hold.bound(mem - int64(queued))
			}
		}
	}
	k.cutC, k.cutSegs, k.cutOOO = k.last, info.DataSegsIn, info.RcvOOOPack
}

// sampleReceiver adds a receiver's reads to the interval, and what waited
// unread at the cut. The runner has just read Bytes (received) for it.
func (k *kernelCounts) sampleReceiver(s *tcpflow.Stream, si *result.StreamInterval) {
	if !k.ok {
		return
	}
	app := s.Bytes()
	k.mu.Lock()
	defer k.mu.Unlock()
	si.KernelCounted = true
	si.AppBytes = app - k.prevApp
	si.Backlog = max(k.last-app, 0)
	si.OutOfOrder = int64(k.ooo - k.prevOOO)
	k.prevApp, k.prevOOO = app, k.ooo
}

// sampleSender adds what the receiver acknowledged during the interval.
func (k *kernelCounts) sampleSender(info *tcpinfo.Info, si *result.StreamInterval) {
	if !k.ok || info.BytesAcked < k.base {
		return
	}
	acked := int64(info.BytesAcked - k.base)
	k.mu.Lock()
	defer k.mu.Unlock()
	acked = max(acked, k.prevAcked)
	si.Delivered, si.HasDelivered = acked-k.prevAcked, true
	k.prevAcked = acked
}

// settleReceiver notes when the kernel last took in data, once the
// receiver is done: its last read can be later (the reader ran late), its
// last arrival cannot. tcpi_last_data_recv counts in jiffies, so it is
// good to a few milliseconds.
func (k *kernelCounts) settleReceiver(s *tcpflow.Stream) {
	if !k.ok {
		return
	}
	info, err := tcpinfo.FromConn(s)
	if err != nil {
		return
	}
	now := time.Since(s.Epoch())
	at := now - time.Duration(info.LastDataRecvms)*time.Millisecond
	if first := s.FirstByte(); at < first {
		at = first
	}
	k.mu.Lock()
	k.lastArrival = max(at, 1)
	k.hold, k.settled = heldOutOfOrder{}, true // the stream is over: nothing is held, all is in order
	k.mu.Unlock()
}

// dataReceived is the data bytes in a receiver's count. The peer's FIN
// takes one in the sequence space, and tcpi_bytes_received counts it.
// Linux reads tcpi_state before it takes the socket's lock for the
// counters, so a FIN that arrives between the two is counted under a
// state from before it: one byte more than the peer sent (seen in CI).
// after, a second read taken once first's is complete, settles it: its
// state shows the FIN, and an unchanged count says that the FIN (which
// moves the count when it arrives) was already in first's. after may be
// nil when first's state already shows the FIN.
func dataReceived(first, after *tcpinfo.Info) uint64 {
	got := first.BytesReceived
	fin := finReceived(first.State) ||
		after != nil && finReceived(after.State) && after.BytesReceived == got
	if fin && got > 0 {
		got--
	}
	return got
}

// finReceived reports whether a TCP state comes after the peer's FIN:
// CLOSE_WAIT, LAST_ACK, CLOSING and TIME_WAIT.
func finReceived(state uint8) bool {
	switch state {
	case 8, 9, 11, 6:
		return true
	}
	return false
}
