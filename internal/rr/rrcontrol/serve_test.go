package rrcontrol

import (
	"testing"
	"time"
)

// A crr request follows its hello at once: a second on a short path, a
// few round trips on a long one, and never longer than the cap, whatever
// round trip the client claims.
func TestCRRRequestWait(t *testing.T) {
	for _, tc := range []struct{ rtt, want time.Duration }{
		{0, time.Second},
		{100 * time.Microsecond, time.Second},
		{215 * time.Millisecond, 1720 * time.Millisecond},
		{time.Hour, 10 * time.Second},
	} {
		if got := crrRequestWait(tc.rtt); got != tc.want {
			t.Errorf("crrRequestWait(%v) = %v, want %v", tc.rtt, got, tc.want)
		}
	}
}
