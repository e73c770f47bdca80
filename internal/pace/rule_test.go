package pace

import (
	"testing"
	"time"
)

// TestSlotRule checks the pacer's slot and catch-up rule as a function of
// time alone. Each case puts the pacer in a state (the next slot, the last
// send) and at a moment ("now", by moving the pacer's start that far into
// the past), calls Wait once, and checks what it decided: release a slot
// now (which one, after skipping how many), or wait. With 1 s slots the
// microseconds the test itself takes cannot move a decision.
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
			p := New(ForSpacing(time.Second))
			p.Start(time.Now().Add(-time.Duration(tc.now * float64(s))))
			p.next = tc.next
			if tc.lastSent >= 0 {
				p.sent, p.lastSent = 1, int64(tc.lastSent*float64(s))
			}
			stop := make(chan struct{})
			waited := false
			p.w.entered = func(bool) { // it would wait: stop it there
				if !waited {
					waited = true
					close(stop)
				}
			}
			slot, ok := p.Wait(stop)
			if tc.wait {
				if ok || !waited {
					t.Fatalf("released slot at %v; want a wait", slot.Sub(p.start))
				}
				return
			}
			if !ok || waited {
				t.Fatalf("waited; want slot %d at once", tc.slot)
			}
			if got := slot.Sub(p.start); got != time.Duration(tc.slot*s) {
				t.Errorf("released the slot due at %v, want slot %d", got, tc.slot)
			}
			if p.Skipped() != tc.skipped || p.next != tc.slot+1 {
				t.Errorf("skipped %d (next %d), want %d skipped", p.Skipped(), p.next, tc.skipped)
			}
		})
	}
}
