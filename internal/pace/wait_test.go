package pace

import (
	"testing"
	"time"
)

// TestWaiterLearns checks the overshoot estimate: up at once, down slowly,
// within bounds.
func TestWaiterLearns(t *testing.T) {
	w := waiter{overshoot: 1000}
	steps := []struct{ late, want int64 }{
		{9001, 5001},           // up by half the difference
		{1001, 5001 - 4000/16}, // down by 1/16 of the difference
		{-50, 4751 - 4751/16},  // early counts as 0
		{int64(time.Hour), 4455 + (int64(maxOvershoot)-4455+1)/2}, // capped before halving
	}
	for i, s := range steps {
		w.learn(s.late)
		if w.overshoot != s.want {
			t.Fatalf("step %d: overshoot %d, want %d", i, w.overshoot, s.want)
		}
	}
}

// TestWaiterUntil checks that a wait ends at or after its deadline, at once
// for a past one, and early (false) when stopped.
func TestWaiterUntil(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name     string
		deadline time.Duration // after now
		spin     time.Duration
		stop     <-chan struct{}
		want     bool
		sleeps   bool
	}{
		{"past", -time.Millisecond, DefaultSpinThreshold, nil, true, false},
		{"spin only", 200 * time.Microsecond, DefaultSpinThreshold, nil, true, false},
		{"sleep then spin", 3 * time.Millisecond, DefaultSpinThreshold, nil, true, true},
		{"stopped", time.Hour, DefaultSpinThreshold, closed, false, true},
		{"stopped while spinning", time.Hour, 2 * time.Hour, closed, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := waiter{base: time.Now(), spin: int64(tt.spin), spinning: true, overshoot: int64(initialOvershoot)}
			slept := false
			w.entered = func(sleeping bool) { slept = slept || sleeping }
			deadline := w.now() + int64(tt.deadline)
			got := w.until(deadline, tt.stop)
			if got != tt.want || slept != tt.sleeps {
				t.Fatalf("until = %v (slept %v), want %v (slept %v)", got, slept, tt.want, tt.sleeps)
			}
			if got && w.now() < deadline {
				t.Fatalf("returned %d ns before the deadline", deadline-w.now())
			}
		})
	}
}

// TestWaiterSleepsOnly: without spinning, a short wait sleeps (never
// spins), ends at or after its deadline, and a long one is stopped.
func TestWaiterSleepsOnly(t *testing.T) {
	for _, d := range []time.Duration{-time.Millisecond, 50 * time.Microsecond, 300 * time.Microsecond, 4 * time.Millisecond} {
		w := waiter{base: time.Now()}
		spun := false
		w.entered = func(sleeping bool) { spun = spun || !sleeping }
		deadline := w.now() + int64(d)
		if !w.until(deadline, nil) || w.now() < deadline {
			t.Fatalf("%v: ended %d ns early", d, deadline-w.now())
		}
		if spun {
			t.Fatalf("%v: spun without Spin", d)
		}
	}
	closed := make(chan struct{})
	close(closed)
	w := waiter{base: time.Now()}
	if w.until(int64(time.Hour), closed) {
		t.Fatal("a stopped hour-long wait returned true")
	}
}
