package tcpflow

import "time"

// A receiver asks the kernel to wake it only once a whole block is
// queued (SO_RCVLOWAT), so that each wake-up reads a block and the
// reader, not the sender, does the socket's receive work while it holds
// the socket. Without it a reader woke for a few segments at a time.
//
// The mark is set only once the first bytes have been read (so the
// receiver's first-byte time is not late), and only when autotuning (or
// -w) has given the socket a buffer of lowWaterBuffers blocks: with less
// than about twice the mark the kernel would raise the buffer and clamp
// the window to the mark itself. A block left unread is then at most a
// quarter of the buffer. A read that returns less than a block with the
// mark set was cut short by the socket's timeout (pollWait), or by the
// end of the stream or an error: the mark, which may delay each read by
// up to that timeout, is taken off for lowWaterBackoff, which at the end
// of a stream is harmless.
const (
	lowWaterBuffers = 4
	lowWaterCheck   = 8 * time.Millisecond // how often the buffer's size is read while the mark is off
	lowWaterBackoff = time.Second
)

// lowWater decides when a receiver's low-water mark is on. Its methods
// are pure functions of the times and sizes they are given.
type lowWater struct {
	on   bool
	next int64 // ns: when to read the buffer's size again
}

// due reports whether the receive buffer's size should be read now.
func (w *lowWater) due(now int64) bool { return !w.on && now >= w.next }

// sized decides from the receive buffer's size (SO_RCVBUF) whether to
// set the mark, to block bytes, now; if not, it looks again after
// lowWaterCheck.
func (w *lowWater) sized(now int64, rcvbuf, block int) bool {
	if block > 1 && rcvbuf >= lowWaterBuffers*block {
		w.on = true
		return true
	}
	w.next = now + int64(lowWaterCheck)
	return false
}

// read reports whether a read of n bytes, with a block of block bytes,
// takes the mark off.
func (w *lowWater) read(now int64, n, block int) bool {
	if !w.on || n >= block {
		return false
	}
	w.on = false
	w.next = now + int64(lowWaterBackoff)
	return true
}
