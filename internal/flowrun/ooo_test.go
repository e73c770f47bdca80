package flowrun

import "testing"

// TestHeldOutOfOrder follows a loss at 215 ms and 100 Mbit/s across a
// cut: 1,000 segments of 1448 bytes arrive behind the hole before the
// cut, 856 more after it, then the retransmission fills the hole and
// the in-order count jumps by all of them.
func TestHeldOutOfOrder(t *testing.T) {
	const mss = 1448
	var h heldOutOfOrder
	// Row k: 7,000 segments in order, then the loss and 1,000 behind it.
	if got := h.cut(7000*mss, 8000, 1000, mss); got != 1000*mss {
		t.Fatalf("held at the first cut %d, want %d", got, 1000*mss)
	}
	// Row k+1: 856 more behind the hole, the retransmission, then 6,000
	// in order: the in-order count gains all 1,856 held and the 6,001.
	if got := h.cut((1856+6001)*mss, 856+1+6000, 856, mss); got != 0 {
		t.Fatalf("held once the hole filled: %d, want 0", got)
	}
	// A cut with no out-of-order arrival holds nothing.
	h = heldOutOfOrder{held: 5 * mss, arrived: 5 * mss}
	if got := h.cut(100*mss, 100, 0, mss); got != 0 {
		t.Fatalf("no out-of-order arrival: held %d", got)
	}
	// The hold never exceeds what arrived out of order since it began,
	// nor goes below zero (a duplicate or a short segment skews the
	// arithmetic).
	h = heldOutOfOrder{}
	if got := h.cut(0, 10, 10, mss); got != 10*mss {
		t.Fatalf("held %d, want %d", got, 10*mss)
	}
	if got := h.cut(50*mss, 10, 5, mss); got != 0 {
		t.Fatalf("more released than held: %d, want 0", got)
	}
	if got := h.cut(0, 3, 3, 0); got != 0 {
		t.Fatalf("no mss: %d", got)
	}
}

// TestHeldOutOfOrderBound: the kernel can't hold more out of order than
// the receive memory it charges, less what waits unread in order. An
// estimate above that is cut to it, one below is left, and the bound
// never makes the estimate negative.
func TestHeldOutOfOrderBound(t *testing.T) {
	const mss = 1448
	var h heldOutOfOrder
	// A hole opens: 1,000 segments arrive out of order, none in order.
	if got := h.cut(0, 1000, 1000, mss); got != 1000*mss {
		t.Fatalf("held %d, want %d", got, 1000*mss)
	}
	if got := h.bound(600 * mss); got != 600*mss {
		t.Fatalf("bounded to %d, want %d", got, 600*mss)
	}
	if got := h.bound(2000 * mss); got != 600*mss {
		t.Fatalf("a looser bound raised the estimate to %d", got)
	}
	if got := h.bound(-5); got != 0 {
		t.Fatalf("a bound below zero left %d", got)
	}
}
