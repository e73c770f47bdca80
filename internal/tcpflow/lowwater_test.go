package tcpflow

import (
	"testing"
	"time"
)

// TestLowWater walks the mark's rule on given times, sizes and byte
// counts: one block once the buffer holds lowWaterBuffers blocks, the
// larger mark once the buffer holds lowWaterBuffers of it and the
// stream's rate fills it within lowWaterFill, one block again when the
// rate no longer fills it within twice that, a look every
// lowWaterCheck, and a short read that takes the mark off for
// lowWaterBackoff. The clock starts far from zero.
func TestLowWater(t *testing.T) {
	const block = 128 << 10
	const batch = lowWaterBatch * block
	check := int64(lowWaterCheck)
	// fill is the byte count, over one lowWaterCheck, of a rate that
	// fills the larger mark in exactly lowWaterFill; slow, in exactly
	// twice that.
	fill := int64(batch) * check / int64(lowWaterFill)
	slow := fill / 2
	big := lowWaterBuffers * batch
	t0 := int64(time.Hour)

	var w lowWater
	if !w.due(t0) {
		t.Fatal("a new reader does not look at its buffer")
	}
	// The first look has no rate: with the buffer for it, only one
	// block, however many bytes have come.
	if m := w.decide(t0, lowWaterBuffers*block-1, block, 100); m != 0 || w.mark != 0 {
		t.Fatalf("mark %d set with a buffer under lowWaterBuffers blocks", m)
	}
	if w.due(t0+check-1) || !w.due(t0+check) {
		t.Fatalf("after a small buffer: due at %v, want lowWaterCheck later", time.Duration(w.next-t0))
	}
	if w.read(t0+check-1, 10, block) {
		t.Error("a short read took off a mark that was not set")
	}
	now := t0 + check
	// A rate one byte short of filling the larger mark in lowWaterFill:
	// one block.
	if m := w.decide(now, big, block, 100+fill-1); m != block {
		t.Fatalf("mark %d at a rate just under the larger mark's, want one block (%d)", m, block)
	}
	if w.due(now+check-1) || !w.due(now+check) {
		t.Fatal("with one block set, the next look is not after lowWaterCheck")
	}
	// A rate that fills it, but a buffer one byte short of
	// lowWaterBuffers larger marks: no change.
	now += check
	if m := w.decide(now, big-1, block, 100+2*fill-1); m != 0 || w.mark != block {
		t.Fatalf("mark %d (now %d) with a buffer under lowWaterBuffers larger marks", m, w.mark)
	}
	now += check
	if m := w.decide(now, big, block, 100+3*fill-1); m != batch {
		t.Fatalf("mark %d with the buffer and the rate for it, want %d", m, batch)
	}
	// The larger mark stays while the rate fills it within twice
	// lowWaterFill, and goes back to one block one byte below that.
	bytes := 100 + 3*fill - 1
	now += check
	bytes += slow
	if m := w.decide(now, big, block, bytes); m != 0 || w.mark != batch {
		t.Fatalf("mark %d (now %d) at half the rate that set it, want it kept", m, w.mark)
	}
	now += check
	bytes += slow - 1
	if m := w.decide(now, big, block, bytes); m != block {
		t.Fatalf("mark %d at just under half the rate, want one block", m)
	}
	now += check
	bytes += fill
	if m := w.decide(now, big, block, bytes); m != batch {
		t.Fatalf("mark %d when the rate is back, want %d", m, batch)
	}
	if w.read(now+1, block, block) || w.mark != batch {
		t.Error("a whole block took the mark off")
	}
	cut := now + 2
	if !w.read(cut, block-1, block) || w.mark != 0 {
		t.Fatal("a short read left the mark on")
	}
	backoff := int64(lowWaterBackoff)
	if w.due(cut+backoff-1) || !w.due(cut+backoff) {
		t.Errorf("after a short read: due at %v, want %v", time.Duration(w.next-cut), lowWaterBackoff)
	}
	// After the back-off the first look has no rate of its own (the one
	// before the short read is not used): one block, then the larger
	// mark a look later.
	now = cut + backoff
	if m := w.decide(now, big, block, 1<<40); m != block {
		t.Fatalf("mark %d at the first look after a back-off, want one block", m)
	}
	if m := w.decide(now+check, big, block, 1<<40+fill); m != batch {
		t.Fatalf("mark %d a look later, want %d", m, batch)
	}
	w.backOff(now + check)
	if w.mark != 0 || w.due(now+check+backoff-1) || !w.due(now+check+backoff) {
		t.Errorf("a mark the kernel refused: mark %d, due at %v", w.mark, time.Duration(w.next))
	}

	var one lowWater
	if m := one.decide(t0, 1<<30, 1, 1); m != 0 {
		t.Error("a mark set for 1-byte blocks, which is the kernel's default")
	}
	// A look at the same instant as the last tells no rate.
	var same lowWater
	same.decide(t0, big, block, 1)
	if m := same.decide(t0, big, block, 1<<40); m != 0 || same.mark != block {
		t.Errorf("mark %d (now %d) from a look at the same instant", m, same.mark)
	}
}
