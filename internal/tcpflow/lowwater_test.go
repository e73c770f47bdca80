package tcpflow

import (
	"testing"
	"time"
)

// TestLowWater walks the mark's rule on given times and sizes: it waits
// for a buffer of lowWaterBuffers blocks, looks again every
// lowWaterCheck, and a short read takes it off for lowWaterBackoff.
func TestLowWater(t *testing.T) {
	const block = 128 << 10
	ms := int64(time.Millisecond)
	var w lowWater
	if !w.due(0) {
		t.Fatal("a new reader does not look at its buffer")
	}
	if w.sized(0, lowWaterBuffers*block-1, block) || w.on {
		t.Fatal("mark set with a buffer under lowWaterBuffers blocks")
	}
	if w.due(int64(lowWaterCheck)-1) || !w.due(int64(lowWaterCheck)) {
		t.Fatalf("after a small buffer: due at %v, want lowWaterCheck", time.Duration(w.next))
	}
	if w.read(5*ms, 10, block) {
		t.Error("a short read took off a mark that was not set")
	}
	now := int64(lowWaterCheck)
	if !w.sized(now, lowWaterBuffers*block, block) || !w.on {
		t.Fatal("mark not set with a buffer of lowWaterBuffers blocks")
	}
	if w.due(now + int64(time.Hour)) {
		t.Error("a set mark asks for the buffer's size again")
	}
	if w.read(now+ms, block, block) || !w.on {
		t.Error("a whole block took the mark off")
	}
	cut := now + 2*ms
	if !w.read(cut, block-1, block) || w.on {
		t.Fatal("a short read left the mark on")
	}
	if w.due(cut+int64(lowWaterBackoff)-1) || !w.due(cut+int64(lowWaterBackoff)) {
		t.Errorf("after a short read: due at %v, want %v", time.Duration(w.next), time.Duration(cut+int64(lowWaterBackoff)))
	}
	var one lowWater
	if one.sized(0, 1<<30, 1) {
		t.Error("a mark set for 1-byte blocks, which is the kernel's default")
	}
}
