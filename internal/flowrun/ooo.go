package flowrun

// heldOutOfOrder estimates the bytes a TCP receiver holds out of order at
// an interval cut. After a loss, everything behind the hole arrives out of
// order and counts in order (tcpi_bytes_received) only when the
// retransmission fills the hole, a round trip later: at 215 ms and
// 1 Gbit/s, 27 MB at once. A row cut on the in-order count alone reads
// that much above the path, and the row before it that much below. The
// held bytes go back to the row they arrived in.
//
// The kernel reports no held byte count, but its counters bound it:
//   - an out-of-order segment (tcpi_rcv_ooopack) adds a segment's bytes;
//   - in-order bytes beyond what the in-order arrivals brought
//     (data segments, tcpi_data_segs_in, less the out-of-order ones)
//     were released from the hold;
//   - a cut with no out-of-order arrival since the last holds nothing:
//     while a hole is open, every arrival behind it is out of order.
//
// The estimate is a pure function of the counters' changes since the
// previous cut; mss is the segment size (tcpi_rcv_mss). It stays within 0
// and what arrived out of order since the hold began, so that the rows
// still add up to the in-order total once the stream ends (held is then
// 0).
type heldOutOfOrder struct {
	held    int64 // bytes, at the last cut
	arrived int64 // bytes that arrived out of order since the hold began
}

// cut updates the estimate from the changes since the previous cut:
// dIn in-order bytes, dSegs data segments, dOOO out-of-order segments.
func (h *heldOutOfOrder) cut(dIn int64, dSegs, dOOO uint32, mss int64) int64 {
	if dOOO == 0 || mss <= 0 {
		h.held, h.arrived = 0, 0
		return 0
	}
	ooo := int64(dOOO) * mss
	inOrderArrivals := int64(dSegs-min(dSegs, dOOO)) * mss
	released := max(dIn-inOrderArrivals, 0)
	h.arrived += ooo
	h.held = min(max(h.held+ooo-released, 0), h.arrived)
	return h.held
}

// bound caps the estimate by what the kernel can be holding out of order:
// the receive memory charged to the socket less the in-order bytes
// waiting unread (SO_MEMINFO, SIOCINQ). Every buffer's true size is at
// least its payload, so the out-of-order payload is at most that; an
// estimate above it (a segment counted out of order twice, say) is cut.
func (h *heldOutOfOrder) bound(limit int64) int64 {
	h.held = min(h.held, max(limit, 0))
	return h.held
}
