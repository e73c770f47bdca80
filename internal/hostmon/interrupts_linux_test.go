package hostmon

import "testing"

func TestReadInterruptsLive(t *testing.T) {
	a, err := ReadInterrupts()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) == 0 {
		t.Fatal("no interrupt lines")
	}
	ncpu := 0
	for _, l := range a {
		ncpu = max(ncpu, len(l.PerCPU))
	}
	for _, l := range a {
		if n := len(l.PerCPU); n != ncpu && n != 1 {
			t.Errorf("IRQ %s has %d counts, others %d", l.IRQ, n, ncpu)
		}
	}
	b, err := ReadInterrupts()
	if err != nil {
		t.Fatal(err)
	}
	// A delta is part of the later count, and idle lines are left out.
	later := make(map[string][]uint64)
	for _, l := range b {
		later[l.IRQ] = l.PerCPU
	}
	for _, d := range InterruptDeltas(a, b, 0) {
		if d.Total == 0 {
			t.Errorf("IRQ %s listed with zero delta", d.IRQ)
		}
		for i, v := range d.PerCPU {
			if v > later[d.IRQ][i] {
				t.Errorf("IRQ %s CPU %d: delta %d above count %d", d.IRQ, i, v, later[d.IRQ][i])
			}
		}
	}
}
