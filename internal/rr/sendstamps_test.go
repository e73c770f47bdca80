package rr

import (
	"testing"
	"time"
)

// lockstepTx is a lockstep transaction of the test's clock: it starts at t1 and
// ends 10 µs later, its request leaving 2 µs in.
func lockstepTx(t1 int64) sample {
	return sample{t1: t1, t4: t1 + 10_000, rtt: 10 * time.Microsecond, done: time.Unix(0, t1+10_000)}
}

func stampAt(id uint32, sw, hw int64) kernelStamps {
	return kernelStamps{id: id, hasID: true, sw: sw, hw: hw}
}

// pendingRun is n back-to-back transactions numbered from first, 100 µs
// apart from t0.
func pendingRun(t0 int64, first uint32, n int) []pendingSend {
	out := make([]pendingSend, n)
	for i := range out {
		out[i] = pendingSend{s: lockstepTx(t0 + int64(i)*100_000), id: first + uint32(i)}
	}
	return out
}

func TestMatchSendStamps(t *testing.T) {
	const t0 = int64(1_700_000_000_000_000_000)
	sw := func(i int) int64 { return t0 + int64(i)*100_000 + 2_000 } // transaction i's request leaving
	cases := []struct {
		name      string
		first     uint32   // this end's number of the first pending send
		ids       []uint32 // or each pending send's number
		stamps    []kernelStamps
		shift     uint32
		wantTx    []int64
		wantHW    []int64
		wantShift uint32
	}{
		{
			name:   "in order",
			stamps: []kernelStamps{stampAt(0, sw(0), 0), stampAt(1, sw(1), 0), stampAt(2, sw(2), 0)},
			wantTx: []int64{sw(0), sw(1), sw(2)},
		},
		{
			name:   "software and hardware in separate messages, out of order",
			stamps: []kernelStamps{stampAt(0, sw(0), 0), stampAt(1, sw(1), 0), stampAt(0, 0, 555), stampAt(2, sw(2), 0), stampAt(1, 0, 666)},
			wantTx: []int64{sw(0), sw(1), sw(2)},
			wantHW: []int64{555, 666, 0},
		},
		{
			// Send 1's response never came: its transaction was counted
			// lost, not held, and its stamp is passed over.
			name:   "a lost request's stamp is passed over",
			ids:    []uint32{0, 2, 3},
			stamps: []kernelStamps{stampAt(0, sw(0), 0), stampAt(1, sw(0)+50_000, 0), stampAt(2, sw(1), 0), stampAt(3, sw(2), 0)},
			wantTx: []int64{sw(0), sw(1), sw(2)},
		},
		{
			name:      "the kernel counted one send fewer, before the batch",
			first:     10,
			stamps:    []kernelStamps{stampAt(9, sw(0), 0), stampAt(10, sw(1), 0), stampAt(11, sw(2), 0)},
			wantTx:    []int64{sw(0), sw(1), sw(2)},
			wantShift: ^uint32(0), // -1
		},
		{
			name:      "a known shift is kept",
			first:     10,
			shift:     ^uint32(0),
			stamps:    []kernelStamps{stampAt(9, sw(0), 0), stampAt(10, sw(1), 0), stampAt(11, sw(2), 0)},
			wantTx:    []int64{sw(0), sw(1), sw(2)},
			wantShift: ^uint32(0),
		},
		{
			name:      "the kernel counted one send more, inside the batch",
			first:     5,
			stamps:    []kernelStamps{stampAt(5, sw(0), 0), stampAt(7, sw(1), 0), stampAt(8, sw(2), 0)},
			wantTx:    []int64{sw(0), sw(1), sw(2)},
			wantShift: 1,
		},
		{
			// Numbers that match but times that don't: another send's
			// stamps, never taken for this one's.
			name:   "a stamp outside the transaction's window is refused",
			stamps: []kernelStamps{stampAt(0, sw(0)-50_000, 0), stampAt(1, sw(1), 0), stampAt(2, sw(2)+90_000, 0)},
			wantTx: []int64{0, sw(1), 0},
		},
		{
			name:   "a stamp dropped by the kernel (a full receive buffer)",
			stamps: []kernelStamps{stampAt(0, sw(0), 0), stampAt(2, sw(2), 0)},
			wantTx: []int64{sw(0), 0, sw(2)},
		},
		{
			name:   "a NIC's stamp alone is taken by its number",
			stamps: []kernelStamps{stampAt(0, 0, 111), stampAt(1, 0, 222), stampAt(2, 0, 333)},
			wantTx: []int64{0, 0, 0},
			wantHW: []int64{111, 222, 333},
		},
		{
			name:   "no stamps at all",
			wantTx: []int64{0, 0, 0},
		},
		{
			name:   "stamps without numbers are passed over",
			stamps: []kernelStamps{{sw: sw(0)}, {sw: sw(1)}},
			wantTx: []int64{0, 0, 0},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pending := pendingRun(t0, c.first, 3)
			for i, id := range c.ids {
				pending[i].id = id
			}
			merged := mergeStamps(nil, c.stamps)
			shift := matchSendStamps(pending, merged, c.shift)
			for i, p := range pending {
				wantHW := int64(0)
				if c.wantHW != nil {
					wantHW = c.wantHW[i]
				}
				if p.s.tx != c.wantTx[i] || p.s.txHW != wantHW {
					t.Errorf("transaction %d: tx %d hw %d, want %d and %d", i, p.s.tx, p.s.txHW, c.wantTx[i], wantHW)
				}
			}
			if shift != c.wantShift {
				t.Errorf("shift %d, want %d", int32(shift), int32(c.wantShift))
			}
		})
	}
}

// The batch is read when it is full, or once its first transaction is
// stampBatchSpan old; a flush records every held transaction once, in
// order, with its stamp, and leaves the batch empty.
func TestSendStampBatch(t *testing.T) {
	if got := stampBatchFor(212992); got != maxStampBatch {
		t.Errorf("batch for Linux's default 208 KiB buffer: %d, want %d", got, maxStampBatch)
	}
	if got := stampBatchFor(4608); got != 1 {
		t.Errorf("batch for a 4.5 KiB buffer: %d, want 1", got)
	}
	if got := stampBatchFor(8 * 2 * 832 * 5); got != 5 {
		t.Errorf("batch for room for five: %d", got)
	}

	const t0 = int64(1_700_000_000_000_000_000)
	acc := newAccumulator("x", 64, 64)
	var order []time.Time
	acc.onSample = func(s Sample) { order = append(order, s.Done) }
	b := newSendStampBatch(4)
	full := false
	for i := range 4 {
		full = b.add(acc, lockstepTx(t0+int64(i)*100_000), uint32(i))
		if full != (i == 3) {
			t.Fatalf("after %d transactions: read now %v", i+1, full)
		}
	}
	reads := 0
	b.flush(func(out []kernelStamps) int {
		reads++
		for i := range 4 {
			out[i] = stampAt(uint32(i), t0+int64(i)*100_000+2_000, 0)
		}
		return 4
	})
	if reads != 1 || acc.completed != 4 || b.recorded != 4 || b.stamped != 4 || len(b.pending) != 0 {
		t.Fatalf("flush: %d reads, %d recorded (%d stamped), %d completed, %d held", reads, b.recorded, b.stamped, acc.completed, len(b.pending))
	}
	for i := 1; i < len(order); i++ {
		if !order[i].After(order[i-1]) {
			t.Fatalf("recorded out of order: %v", order)
		}
	}
	// Each network RTT is the RTT less the 2 µs to its request's stamp.
	if acc.minNet != 8_000 || acc.maxNet != 8_000 {
		t.Fatalf("network RTT %d..%d ns, want 8000 (10 µs less the 2 µs send share)", acc.minNet, acc.maxNet)
	}

	// Two transactions 60 ms apart: the second reads the batch.
	if b.add(acc, lockstepTx(t0+1_000_000), 4) {
		t.Fatal("one transaction made a batch of four full")
	}
	if !b.add(acc, lockstepTx(t0+1_000_000+int64(60*time.Millisecond)), 5) {
		t.Fatal("a batch spanning 60 ms was not read")
	}
	b.flush(func([]kernelStamps) int { return 0 })
	if acc.completed != 6 || b.stamped != 4 || b.recorded != 6 || acc.maxNet != 10_000 {
		t.Fatalf("after an empty read: %d completed, %d of %d stamped, largest network RTT %d ns (want the whole 10 µs)",
			acc.completed, b.stamped, b.recorded, acc.maxNet)
	}
	// A transaction of a long path (RTT 50 ms or more) is read at once.
	long := lockstepTx(t0 + 2_000_000_000)
	long.rtt = stampBatchSpan
	if !b.add(acc, long, 6) {
		t.Fatal("a 50 ms transaction was held")
	}
	b.flush(func([]kernelStamps) int { return 0 })
	// An empty batch reads nothing.
	b.flush(func([]kernelStamps) int { t.Fatal("an empty batch read the queue"); return 0 })
}
