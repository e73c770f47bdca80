package campaign

import (
	"strings"
	"testing"
)

func TestSameWindows(t *testing.T) {
	mib := float64(1 << 20)
	got := SameWindows([]float64{64 << 10, 1 * mib, 4 * mib, 8 * mib, 16 * mib}, 4<<20, 8<<20)
	if len(got) != 1 {
		t.Fatalf("%q", got)
	}
	for _, want := range []string{"-w 8.00 MBytes, -w 16.0 MBytes", "net.core.rmem_max is 4.00 MBytes", "what it grants -w 4.00 MBytes"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%q lacks %q", got[0], want)
		}
	}
	if got := SameWindows([]float64{64 << 10, 4 * mib}, 4<<20, 4<<20); got != nil {
		t.Errorf("nothing above the limits: %q", got)
	}
	if got := SameWindows([]float64{8 * mib}, 0, 0); got != nil {
		t.Errorf("limits unknown: %q", got)
	}
	if got := SameWindows([]float64{8 * mib}, 0, 2<<20); len(got) != 1 || !strings.Contains(got[0], "wmem_max") {
		t.Errorf("wmem_max the lower: %q", got)
	}
}
