package tcpflow

import "time"

// A receiver asks the kernel to wake it only once whole blocks are
// queued (SO_RCVLOWAT), so that each wake-up reads blocks and the reader,
// not the sender, does the socket's receive work while it holds the
// socket. Without it a reader woke for a few segments at a time.
//
// The mark is one block at first and lowWaterBatch blocks while the
// stream is fast enough. Below the mark the kernel ACKs data as it
// arrives rather than waiting for the reader to take it (the rule it
// keeps for SO_RCVLOWAT), so a larger mark lets the sender go on while
// the reader waits for its turn on a CPU, and the reader takes
// lowWaterBatch blocks per wake-up. Measured on loopback (see
// bench/RESULTS.md): three blocks carried far more than one at -l 128K
// and 1M, and at -l 128K -P 2 two blocks carried less than one.
//
// The mark is set only once the first bytes have been read (so the
// receiver's first-byte time is not late), and only when autotuning (or
// -w) has given the socket a buffer of lowWaterBuffers marks: with less
// than about twice the mark the kernel would raise the buffer (and, on
// older kernels, clamp the window to the mark). The bytes left unread
// are then at most a quarter of the buffer. The larger mark is set when
// the stream's rate fills it within lowWaterFill, and goes back to one
// block when the rate no longer fills it within twice that, so as of
// the last look it holds back a few milliseconds of the stream. A read
// that returns less than a block with a mark set was cut short by the
// socket's timeout (pollWait), or by the end of the stream or an error:
// the mark, which may delay each read by up to that timeout, is taken
// off for lowWaterBackoff, which at the end of a stream is harmless.
const (
	lowWaterBuffers = 4
	lowWaterBatch   = 3                    // blocks in the larger mark
	lowWaterFill    = 2 * time.Millisecond // the larger mark is set when the stream's rate fills it within this, and lowered at twice this
	lowWaterCheck   = 8 * time.Millisecond // how often a receiver reads its buffer's size and its rate
	lowWaterBackoff = time.Second
)

// lowWater decides a receiver's low-water mark. Its methods are pure
// functions of the times (on any monotonic scale), sizes and byte counts
// they are given.
type lowWater struct {
	mark int   // bytes; 0 when off
	next int64 // ns: when to look at the buffer and the rate again
	// The byte count and time of the last look, from which the rate is
	// taken (seen: there was one since the mark was last taken off).
	seen  bool
	bytes int64
	at    int64
}

// due reports whether the buffer's size and the rate should be read now.
func (w *lowWater) due(now int64) bool { return now >= w.next }

// later puts the next look lowWaterCheck after now, when this one could
// not read the buffer's size.
func (w *lowWater) later(now int64) { w.next = now + int64(lowWaterCheck) }

// decide returns the mark to set now, in bytes, from the receive
// buffer's size (SO_RCVBUF) and the stream's byte count, or 0 to leave
// it as it is; it looks again after lowWaterCheck. It raises the mark
// to one block, then to the larger mark, and lowers the larger mark to
// one block; a short read takes any mark off.
func (w *lowWater) decide(now int64, rcvbuf, block int, bytes int64) int {
	rate, known := 0.0, w.seen && now > w.at // bytes per second since the last look
	if known {
		rate = float64(bytes-w.bytes) / time.Duration(now-w.at).Seconds()
	}
	w.seen, w.bytes, w.at = true, bytes, now
	w.later(now)
	if block <= 1 {
		return 0 // a 1-byte mark is the kernel's default
	}
	batch := lowWaterBatch * block
	want := w.mark
	switch {
	case w.mark == batch:
		if known && rate*(2*lowWaterFill).Seconds() < float64(batch) {
			want = block
		}
	case rcvbuf >= lowWaterBuffers*batch && known && rate*lowWaterFill.Seconds() >= float64(batch):
		want = batch
	case w.mark == 0 && rcvbuf >= lowWaterBuffers*block:
		want = block
	}
	if want == w.mark {
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
	w.backOff(now)
	return true
}

// backOff takes the mark off until lowWaterBackoff from now: after a
// short read, or when the kernel refused a mark (the caller then puts
// the kernel's back to 1).
func (w *lowWater) backOff(now int64) {
	w.mark, w.seen = 0, false
	w.next = now + int64(lowWaterBackoff)
}
