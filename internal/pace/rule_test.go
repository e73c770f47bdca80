package pace

import (
	"testing"
	"time"
)

// TestSlotRule checks the pacer's slot and catch-up rule (slotRule) as
// the pure function of time it is: each case gives a state (the next
// slot, the last send) and a moment, and checks what it decides: release
// a slot now (which one, after skipping how many), or wait.
//
// The rule: slot k is due at k·interval; it goes no earlier than its time
// and than half an interval after the last send, and no later than one
// interval after its time; slots that can't are skipped, keeping the
// phase. A late sender never sends missed slots back to back.
func TestSlotRule(t *testing.T) {
	const s = int64(time.Second)
	tests := []struct {
		name     string
		next     int64   // the next slot
		lastSent float64 // s since start; <0: nothing sent yet
		now      float64 // s since start
		wait     bool    // Wait waits rather than releasing a slot
		slot     int64   // else: the slot released
		skipped  int64   // slots skipped on the way
	}{
		{"first slot at once", 0, -1, 0.2, false, 0, 0},
		{"a schedule that starts in the future: wait for slot 0", 0, -1, -0.3, true, 0, 0},
		{"before its time", 1, 0, 0.3, true, 0, 0},
		{"a little late: released", 1, 0, 1.2, false, 1, 0},
		{"almost a slot late: released", 1, 0, 1.99, false, 1, 0},
		{"more than a slot late: skipped", 1, 0, 2.5, false, 2, 1},
		{"a stall of several slots: skips keep the phase", 1, 0, 5.25, false, 5, 4},
		{"no burst: half a slot after a late send", 2, 1.9, 2.0, true, 0, 0},
		{"half a slot after the late send: released", 2, 1.9, 2.45, false, 2, 0},
		{"the half-slot gap would make it a slot late: skipped", 2, 1.9, 3.3, false, 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sent, last int64
			if tc.lastSent >= 0 {
				sent, last = 1, int64(tc.lastSent*float64(s))
			}
			slot, skipped, until, wait := slotRule(s, int64(tc.now*float64(s)), tc.next, sent, last)
			if tc.wait {
				if !wait || until <= int64(tc.now*float64(s)) {
					t.Fatalf("released slot %d (wait %v until %d); want a wait", slot, wait, until)
				}
				return
			}
			if wait {
				t.Fatalf("waits until %v; want slot %d at once", time.Duration(until), tc.slot)
			}
			if slot != tc.slot || skipped != tc.skipped {
				t.Errorf("slot %d with %d skipped, want slot %d with %d skipped", slot, skipped, tc.slot, tc.skipped)
			}
		})
	}
}
