package stats

// gap is a range of missing sequence numbers lo..hi-1, found when a datagram
// with a higher number arrived. Until its deadline it waits for re-ordered
// datagrams (filled counts them); at the deadline what is still missing is
// lost.
type gap struct {
	lo, hi   uint64
	deadline int64 // receiver ns
	filled   uint64
	row      int // the interval row it was found in: its loss is that row's
}

func (g *gap) missing() uint64 { return g.hi - g.lo - g.filled }

// gapList holds the pending gaps. A gap is only ever found above every
// earlier one (it starts just past the highest number seen), and its
// deadline is its detection time plus a fixed threshold, with detection
// times that never go backwards; so the list is sorted both by number and
// by deadline, and gaps leave from the front. Ranges, not single numbers,
// keep a burst loss of millions one entry.
type gapList struct {
	q ring[gap]
}

func (l *gapList) len() int { return l.q.len() }

func (l *gapList) add(lo, hi uint64, deadline int64, row int) {
	l.q.pushBack(gap{lo: lo, hi: hi, deadline: deadline, row: row})
}

// pendingIn reports whether a gap found in row still waits for numbers.
// Gaps are found in row order, so row's are the newest.
func (l *gapList) pendingIn(row int) bool {
	for i := l.q.len() - 1; i >= 0 && l.q.at(i).row == row; i-- {
		if l.q.at(i).missing() > 0 {
			return true
		}
	}
	return false
}

// lowest returns the first number of the lowest pending gap.
func (l *gapList) lowest() (uint64, bool) {
	if l.q.len() == 0 {
		return 0, false
	}
	return l.q.front().lo, true
}

// find returns the pending gap holding s, or nil.
func (l *gapList) find(s uint64) *gap {
	// Binary search for the last gap with lo <= s, by hand: sort.Search's
	// closure would cost an allocation on the hot path.
	i, j := 0, l.q.len()
	for i < j {
		m := int(uint(i+j) >> 1)
		if l.q.at(m).lo <= s {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == 0 {
		return nil
	}
	if g := l.q.at(i - 1); s < g.hi {
		return g
	}
	return nil
}

// dropFilled removes gaps at the front that re-ordered datagrams filled
// completely; gaps filled further back wait their turn (removing from the
// middle would cost O(n)) and expire with nothing missing.
func (l *gapList) dropFilled() {
	for l.q.len() > 0 && l.q.front().missing() == 0 {
		l.q.popFront()
	}
}

// expire removes the gaps whose deadline is at or before now and returns
// how many numbers they still missed: those are lost.
func (l *gapList) expire(now int64) (lost uint64) {
	for l.q.len() > 0 && l.q.front().deadline <= now {
		lost += l.q.front().missing()
		l.q.popFront()
	}
	return lost
}

// expireFront removes the lowest gap before its deadline, to bound memory.
func (l *gapList) expireFront() (lost uint64) {
	lost = l.q.front().missing()
	l.q.popFront()
	return lost
}

// drain removes every gap, as the stream ends, and returns the numbers
// below limit they still missed. seen counts the arrived numbers of a gap
// that limit cuts in two (the filled count doesn't say where they were).
// Each gap's row is told how many of the numbers it held as missing are
// lost after all (the rest were above limit: never sent).
func (l *gapList) drain(limit uint64, seen *seenWindow, settle func(row int, missing, lost uint64)) (lost uint64) {
	for l.q.len() > 0 {
		g := l.q.front()
		var n uint64
		switch {
		case g.hi <= limit:
			n = g.missing()
		case g.lo < limit:
			n = limit - g.lo - seen.count(g.lo, limit)
		}
		settle(g.row, g.missing(), n)
		lost += n
		l.q.popFront()
	}
	return lost
}
