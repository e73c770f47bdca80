package hostmon

import (
	"math"
	"testing"
)

func TestReadCPUStatLive(t *testing.T) {
	a, err := ReadCPUStat()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 2 || a[0].Name != "cpu" || a[1].Name != "cpu0" {
		t.Fatalf("want cpu, cpu0, ...; got %+v", a)
	}
	// Ticks only move forward, so a later sample splits into valid shares.
	b, err := ReadCPUStat()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Split(a, b) {
		sum := s.User + s.System + s.SoftIRQ + s.IRQ + s.Idle + s.Other
		if sum != 0 && math.Abs(sum-100) > 1e-6 {
			t.Errorf("%s split sums to %v: %+v", s.Name, sum, s)
		}
	}
}
