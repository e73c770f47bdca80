//go:build unix || windows

package hostmon

import (
	"testing"
	"time"
)

// TestProcessCPUAdvances spins until the process's CPU time moves; the
// deadline only bounds a broken clock, it is not used to wait.
func TestProcessCPUAdvances(t *testing.T) {
	a, err := ProcessCPU()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var b CPUTimes
	x := 1
	for {
		for i := 0; i < 1_000_000; i++ {
			x = x*31 + i
		}
		if b, err = ProcessCPU(); err != nil {
			t.Fatal(err)
		}
		if b.User+b.System > a.User+a.System || time.Now().After(deadline) {
			break
		}
	}
	if b.User+b.System <= a.User+a.System {
		t.Fatalf("CPU time did not advance: %+v then %+v (x=%d)", a, b, x)
	}
	if !b.Wall.After(a.Wall) {
		t.Errorf("wall clock did not advance: %v then %v", a.Wall, b.Wall)
	}
	if _, _, total := Usage(a, b); total <= 0 {
		t.Errorf("Usage total = %v after spinning, want > 0", total)
	}
}
