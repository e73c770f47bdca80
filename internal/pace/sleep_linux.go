package pace

import (
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleep blocks the calling thread in nanosleep, which wakes within
// tens of microseconds where a Go timer may take a millisecond.
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for {
		var rem unix.Timespec
		if err := unix.Nanosleep(&ts, &rem); err != unix.EINTR {
			return
		}
		ts = rem
	}
}

// sleepUntil blocks the calling thread until deadline ns after base, on an
// absolute CLOCK_MONOTONIC deadline (TIMER_ABSTIME): Go's monotonic clock
// is CLOCK_MONOTONIC, so the time spent between reading the clock and
// going to sleep does not add to the wait, as it would to a relative one.
// *mono caches CLOCK_MONOTONIC's reading at base (0: not yet read), so
// that a wait costs one system call, the sleep.
func sleepUntil(base time.Time, deadline int64, mono *int64) {
	if *mono == 0 {
		var ts unix.Timespec
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			preciseSleep(time.Duration(deadline - int64(time.Since(base))))
			return
		}
		// The two clocks are the same clock read a few ns apart.
		*mono = max(ts.Nano()-int64(time.Since(base)), 1)
	}
	at := unix.NsecToTimespec(*mono + deadline)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &at, nil) == unix.EINTR {
	}
}

// LowTimerSlack lets the calling thread's sleeps end within a microsecond
// or so of their deadline instead of Linux's default 50 µs slack. Call it
// from a goroutine locked to its thread (runtime.LockOSThread) that is
// never unlocked: the setting belongs to the thread.
func LowTimerSlack() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
}
