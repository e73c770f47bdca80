package tcpflow

import "time"

// A receiver asks the kernel to wake it only once whole blocks are
// queued (SO_RCVLOWAT), so that each wake-up reads blocks and the reader,
// not the sender, does the socket's receive work while it holds the
// socket. Without it a reader woke for a few segments at a time.
//
// The mark is one block at first and lowWaterBatch blocks once the
// stream is fast enough. Below the mark the kernel ACKs data as it
// arrives rather than waiting for the reader to take it (the rule it
// keeps for SO_RCVLOWAT), so a larger mark lets the sender go on while
// the reader waits for its turn on a CPU, and the reader takes
// lowWaterBatch blocks per wake-up. Measured on loopback (see
// bench/RESULTS.md): three blocks carried far more than one at -l 128K
// and 1M, and two blocks less than one.
//
// The mark is set only once the first bytes have been read (so the
// receiver's first-byte time is not late), and only when autotuning (or
// -w) has given the socket a buffer of lowWaterBuffers marks: with less
// than about twice the mark the kernel would raise the buffer and clamp
// the window to the mark itself. The bytes left unread are then at most
// a quarter of the buffer, and, for the larger mark, at most
// lowWaterFill of the stream's rate. A read that returns less than a
// block with the mark set was cut short by the socket's timeout
// (pollWait), or by the end of the stream or an error: the mark, which
// may delay each read by up to that timeout, is taken off for
// lowWaterBackoff, which at the end of a stream is harmless.
const (
	lowWaterBuffers = 4
	lowWaterBatch   = 3                    // blocks in the larger mark
	lowWaterFill    = 2 * time.Millisecond // the most of the stream's rate the larger mark holds
	lowWaterCheck   = 8 * time.Millisecond // how often the buffer's size and the rate are read below the larger mark
	lowWaterBackoff = time.Second
)

// lowWater decides a receiver's low-water mark. Its methods are pure
// functions of the times, sizes and byte counts they are given.
type lowWater struct {
	mark int   // bytes; 0 when off
	next int64 // ns: when to look at the buffer and the rate again
	// The byte count and time of the last look, from which the rate
	// is taken; at is 0 before the first.
	bytes int64
	at    int64
}

// settled reports whether the larger mark is set, after which nothing is
// read until a short read takes it off.
func (w *lowWater) settled(block int) bool { return w.mark >= lowWaterBatch*block }

// due reports whether the buffer's size and the rate should be read now
// to decide the mark: until the larger mark is set, every lowWaterCheck.
func (w *lowWater) due(now int64, block int) bool { return !w.settled(block) && now >= w.next }

// decide returns the mark to set, in bytes, from the receive buffer's
// size (SO_RCVBUF) and the stream's byte count now, or 0 to leave it as
// it is; it looks again after lowWaterCheck. A mark is only ever raised
// here: a short read takes it off.
func (w *lowWater) decide(now int64, rcvbuf, block int, bytes int64) int {
	var rate float64 // bytes per second since the last look
	if w.at != 0 && now > w.at {
		rate = float64(bytes-w.bytes) / (float64(now-w.at) / float64(time.Second))
	}
	w.bytes, w.at = bytes, now
	w.next = now + int64(lowWaterCheck)
	if block <= 1 {
		return 0 // a 1-byte mark is the kernel's default
	}
	want := 0
	if batch := lowWaterBatch * block; rcvbuf >= lowWaterBuffers*batch && rate*lowWaterFill.Seconds() >= float64(batch) {
		want = batch
	} else if rcvbuf >= lowWaterBuffers*block {
		want = block
	}
	if want <= w.mark {
		return 0
	}
	w.mark = want
	return want
}

// read reports whether a read of n bytes, with a block of block bytes,
// takes the mark off.
func (w *lowWater) read(now int64, n, block int) bool {
	if w.mark == 0 || n >= block {
		return false
	}
	w.mark, w.at = 0, 0
	w.next = now + int64(lowWaterBackoff)
	return true
}

// refused undoes a mark the kernel would not set, backing off as from a
// short read.
func (w *lowWater) refused(now int64) {
	w.mark, w.at = 0, 0
	w.next = now + int64(lowWaterBackoff)
}
