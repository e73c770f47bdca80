//go:build !linux

package pace

import "time"

// preciseSleep is an ordinary sleep where nanosleep is not wired; the
// waiter learns its lateness and spins the rest.
func preciseSleep(d time.Duration) { time.Sleep(d) }

// sleepUntil sleeps until deadline ns after base: a relative sleep on the
// monotonic clock, which wakes later than Linux's absolute one.
func sleepUntil(base time.Time, deadline int64, _ *int64) {
	if d := deadline - int64(time.Since(base)); d > 0 {
		time.Sleep(time.Duration(d))
	}
}

// LowTimerSlack does nothing here: timer slack is Linux's.
func LowTimerSlack() {}
