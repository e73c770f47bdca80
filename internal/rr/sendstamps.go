package rr

import "time"

// A UDP request's send stamp comes back on the socket's error queue, and
// reading it took a recvmsg of its own a transaction: 1.6-1.9 µs of CPU
// on a small VM, a tenth of what the client spends a transaction
// (bench/RESULTS.md). Lockstep transactions are therefore recorded in
// batches: each waits, unrecorded, with the stamps of its request
// queued, until the batch is full or spans stampBatchSpan; one recvmmsg
// then reads every stamp queued, and each transaction is recorded with
// its own. The read comes after T4 either way, outside
// the RTT.

// Batch bounds. Every queued stamp is charged to the socket's receive
// buffer (832 bytes on Linux 6.x), as is the response it waits for, so
// the stamps of a batch (with a NIC's hardware stamps, two a send) may
// take at most an eighth of the buffer.
const (
	maxStampBatch   = 16
	stampTruesize   = 832
	stampBatchSpan  = 50 * time.Millisecond // a long path's transactions are recorded as they complete
	stampsPerSend   = 2                     // software and hardware, in separate messages
	stampBufferPart = 8
)

// stampBatchFor is the batch that fits a receive buffer of rcvbuf bytes.
func stampBatchFor(rcvbuf int) int {
	return min(max(rcvbuf/stampBufferPart/(stampsPerSend*stampTruesize), 1), maxStampBatch)
}

// pendingSend is a completed transaction waiting for its request's send
// stamps.
type pendingSend struct {
	acc *accumulator
	s   sample
	id  uint32 // the request's send number as this end counted it (OPT_ID)
}

// sendStampBatch holds a prober's completed UDP transactions until their
// send stamps are read.
type sendStampBatch struct {
	size    int
	pending []pendingSend
	stamps  []kernelStamps // what a read returned
	merged  []kernelStamps // the same, one per send number
	// shift is the kernel's send numbers less this end's, as last seen:
	// 0 unless a send was counted by one and not the other (a datagram
	// refused before it was built, say).
	shift uint32
	// recorded and stamped count the transactions flushed, and those
	// among them given a send stamp.
	recorded, stamped int64
}

func newSendStampBatch(size int) *sendStampBatch {
	size = max(size, 1)
	return &sendStampBatch{
		size:    size,
		pending: make([]pendingSend, 0, size),
		stamps:  make([]kernelStamps, stampsPerSend*size+8),
		merged:  make([]kernelStamps, 0, stampsPerSend*size+8),
	}
}

// add holds a completed transaction; it says whether the batch should be
// read now: it is full, or its first transaction completed
// stampBatchSpan or more before this one, or this one took that long (on
// a long path each transaction is recorded as it completes).
func (b *sendStampBatch) add(acc *accumulator, s sample, id uint32) bool {
	b.pending = append(b.pending, pendingSend{acc: acc, s: s, id: id})
	return len(b.pending) >= b.size || s.done.Sub(b.pending[0].s.done) >= stampBatchSpan || s.rtt >= stampBatchSpan
}

// flush reads the queued stamps with read (into the slice it is given,
// returning how many it filled), gives each held transaction its own,
// and records them in order.
func (b *sendStampBatch) flush(read func([]kernelStamps) int) {
	if len(b.pending) == 0 {
		return
	}
	n := read(b.stamps)
	b.merged = mergeStamps(b.merged[:0], b.stamps[:n])
	b.shift = matchSendStamps(b.pending, b.merged, b.shift)
	for i := range b.pending {
		p := &b.pending[i]
		b.recorded++
		if p.s.tx != 0 || p.s.txHW != 0 {
			b.stamped++
		}
		p.acc.add(p.s)
		p.acc = nil
	}
	b.pending = b.pending[:0]
}

// mergeStamps appends to out one entry per send number in stamps, with
// the latest software and hardware stamps given for it (they come in
// separate messages); stamps without a number are passed over.
func mergeStamps(out, stamps []kernelStamps) []kernelStamps {
	for _, st := range stamps {
		if !st.hasID || st.sw == 0 && st.hw == 0 {
			continue
		}
		if i := findStamp(out, st.id); i >= 0 {
			out[i].sw, out[i].hw = max(out[i].sw, st.sw), max(out[i].hw, st.hw)
			continue
		}
		out = append(out, st)
	}
	return out
}

func findStamp(stamps []kernelStamps, id uint32) int {
	for i := len(stamps) - 1; i >= 0; i-- { // the one sought is most often the last
		if stamps[i].id == id {
			return i
		}
	}
	return -1
}

// matchSendStamps gives each pending transaction (in send order) the
// stamps of its request: the stamps numbered as its send, shifted by
// shift, whose software stamp falls between its T1 and T4. A lockstep
// transaction's request leaves within that window, and the windows of
// two transactions never overlap, so a stamp from outside it belongs to
// another send: then the stamp that does fall in the window is sought
// among all of them, and its number gives the shift from then on. A
// stamp with no software time (a NIC's alone) is taken by its number. A
// transaction none fits keeps no stamp (the network RTT then keeps its
// send share, as without stamps). It returns the shift.
func matchSendStamps(pending []pendingSend, stamps []kernelStamps, shift uint32) uint32 {
	for i := range pending {
		p := &pending[i]
		j := findStamp(stamps, p.id+shift)
		switch {
		case j >= 0 && inSendWindow(stamps[j].sw, p.s):
		case j >= 0 && stamps[j].sw == 0:
		default:
			j = -1
			for k := range stamps {
				if inSendWindow(stamps[k].sw, p.s) {
					j = k
					shift = stamps[k].id - p.id
					break
				}
			}
		}
		if j >= 0 {
			p.s.tx, p.s.txHW = stamps[j].sw, stamps[j].hw
		}
	}
	return shift
}

// inSendWindow says whether a software send stamp (wall clock, ns)
// falls in the transaction's T1..T4.
func inSendWindow(sw int64, s sample) bool { return sw != 0 && sw >= s.t1 && sw <= s.t4 }
