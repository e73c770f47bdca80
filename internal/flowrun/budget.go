package flowrun

import "sync/atomic"

// Budget shares a byte limit (-n) among the sending streams of one end
// (one direction), so that together they send exactly that many bytes.
// The runner makes one per test and hands it to every flow in Start.
type Budget struct {
	limited   bool
	remaining atomic.Int64
}

// NewBudget returns a budget of n bytes; n <= 0 means no limit.
func NewBudget(n int64) *Budget {
	b := &Budget{limited: n > 0}
	b.remaining.Store(n)
	return b
}

// Take reserves up to want bytes and returns how many may be sent; 0 means
// the budget is spent.
func (b *Budget) Take(want int) int {
	if b == nil || !b.limited {
		return want
	}
	for {
		left := b.remaining.Load()
		if left <= 0 {
			return 0
		}
		n := int64(want)
		if n > left {
			n = left
		}
		if b.remaining.CompareAndSwap(left, left-n) {
			return int(n)
		}
	}
}

// Return gives back bytes reserved but not sent (a write cut short).
func (b *Budget) Return(n int) {
	if b != nil && b.limited && n > 0 {
		b.remaining.Add(int64(n))
	}
}
