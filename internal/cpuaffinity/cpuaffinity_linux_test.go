package cpuaffinity

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Pin narrows every thread to the CPU and restore widens them again.
func TestPinAndRestore(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for i := range 1024 {
		if before.IsSet(i) {
			cpu = i
			break
		}
	}
	if cpu < 0 {
		t.Skip("no CPU in the process's mask")
	}
	restore, err := Pin(cpu)
	if err != nil {
		t.Fatal(err)
	}
	var during unix.CPUSet
	if err := unix.SchedGetaffinity(0, &during); err != nil {
		t.Fatal(err)
	}
	if during.Count() != 1 || !during.IsSet(cpu) {
		t.Fatalf("pinned mask has %d CPUs, want only CPU %d", during.Count(), cpu)
	}
	restore()
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("restored mask has %d CPUs, want the %d it had", after.Count(), before.Count())
	}
}

// A CPU the process may not use is refused, naming -A.
func TestPinRefusesAbsentCPU(t *testing.T) {
	_, err := Pin(1023)
	if err == nil {
		t.Skip("this host has CPU 1023")
	}
	if !strings.HasPrefix(err.Error(), "-A 1023: ") {
		t.Fatalf("err = %v, want it to name -A 1023", err)
	}
}
