package schedule

import (
	"strings"
	"testing"
	"time"
)

// TestReserveFor: a test's reservation is its model's length and the
// margin: -O runs before -t, rr runs each size for -t, and udpmon's
// default grid sends for about 97 s (which a 10 s guess cut short).
func TestReserveFor(t *testing.T) {
	for args, want := range map[string]time.Duration{
		"client": 10 * time.Second, "client -t 5": 5 * time.Second, "client --time=2.5": 2500 * time.Millisecond,
		"client -t 10 -O 2": 12 * time.Second, "rr -t3": 3 * time.Second, "rr --sizes 64,512 -t 3": 6 * time.Second,
		"client -n 100M -b 100m": time.Duration(float64(100<<20) * 8 / 100e6 * float64(time.Second)),
	} {
		got, err := ReserveFor(strings.Fields(args))
		if err != nil || got != want+ReserveMargin {
			t.Errorf("%s: %v %v, want %v", args, got, err, want+ReserveMargin)
		}
	}
	got, err := ReserveFor([]string{"udpmon"})
	if err != nil || got < 97*time.Second+ReserveMargin {
		t.Errorf("udpmon's default grid: %v %v, want at least its 97 s of sending", got, err)
	}
	if _, err := ReserveFor([]string{"client", "-n", "1G"}); err == nil || !strings.Contains(err.Error(), "give reserve") {
		t.Errorf("-n as fast as the path allows: %v", err)
	}
}
