package stats

import "math/bits"

// seenWindow remembers which sequence numbers of the most recent size ones
// (top-size+1 .. top) have arrived: one bit each, in a ring indexed by
// seq mod size. Duplicates are told from re-ordered and late datagrams by
// it. The receiver grows it so that it always covers every missing range
// that is still waiting for its deadline; below it, nothing can be told
// (see UDPReceiver).
type seenWindow struct {
	bits []uint64
	size uint64 // a power of two, at least 64
	top  uint64 // highest sequence covered; meaningful once started
	// floor is the lowest number the bits know about: growing the ring
	// does not teach it about numbers that had already left the window.
	floor   uint64
	started bool
}

func newSeenWindow(size uint64) seenWindow {
	return seenWindow{bits: make([]uint64, size/64), size: size}
}

// lo is the lowest sequence number covered.
func (w *seenWindow) lo() uint64 {
	if w.top+1 < w.size {
		return w.floor
	}
	return max(w.floor, w.top+1-w.size)
}

// covers reports whether s is within the window (s <= top).
func (w *seenWindow) covers(s uint64) bool { return w.started && s <= w.top && s >= w.lo() }

func (w *seenWindow) get(s uint64) bool {
	p := s & (w.size - 1)
	return w.bits[p>>6]&(1<<(p&63)) != 0
}

func (w *seenWindow) set(s uint64) {
	p := s & (w.size - 1)
	w.bits[p>>6] |= 1 << (p & 63)
}

// advance moves the top of the window to s (s > top). The positions that
// s and the numbers before it take over held numbers that fall out of the
// window, so they are cleared.
func (w *seenWindow) advance(s uint64) {
	if !w.started {
		w.started, w.top = true, s
		return
	}
	from := w.top + 1
	w.top = s
	if s-from+1 >= w.size {
		clear(w.bits)
		return
	}
	a, b := from&(w.size-1), s&(w.size-1)
	if a <= b {
		w.clearPositions(a, b)
	} else {
		w.clearPositions(a, w.size-1)
		w.clearPositions(0, b)
	}
}

// clearPositions clears ring positions a..b inclusive (a <= b).
func (w *seenWindow) clearPositions(a, b uint64) {
	wa, wb := a>>6, b>>6
	lowMask := ^uint64(0) << (a & 63)     // bits a.. of word wa
	highMask := ^uint64(0) >> (63 - b&63) // bits ..b of word wb
	if wa == wb {
		w.bits[wa] &^= lowMask & highMask
		return
	}
	w.bits[wa] &^= lowMask
	clear(w.bits[wa+1 : wb])
	w.bits[wb] &^= highMask
}

// count returns how many of a..b-1 (all within the window) have arrived.
func (w *seenWindow) count(a, b uint64) uint64 {
	var n uint64
	for s := a; s < b; {
		p := s & (w.size - 1)
		// Take as many bits as remain in this word, in this range.
		k := min(64-p&63, b-s)
		word := w.bits[p>>6] >> (p & 63)
		if k < 64 {
			word &= 1<<k - 1
		}
		n += uint64(bits.OnesCount64(word))
		s += k
	}
	return n
}

// grow makes the window size numbers long (a power of two > w.size),
// keeping what it knows: each 64-number block moves to its place in the
// larger ring, masked to the numbers the old window covered (the rest of an
// edge word belonged to numbers at the window's other end).
func (w *seenWindow) grow(size uint64) {
	nb := make([]uint64, size/64)
	if w.started {
		lo := w.lo()
		for b := lo &^ 63; b <= w.top; b += 64 {
			word := w.bits[(b&(w.size-1))>>6]
			if b < lo {
				word &= ^uint64(0) << (lo - b)
			}
			if w.top-b < 63 {
				word &= ^uint64(0) >> (63 - (w.top - b))
			}
			nb[(b&(size-1))>>6] |= word
		}
	}
	if w.started {
		w.floor = w.lo()
	}
	w.bits, w.size = nb, size
}
