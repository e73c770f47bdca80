package pace

import "time"

// Go's timers wake late: a sleep of 50 µs typically takes ~1.1 ms here
// (measured: p50 1.1 ms, p99 1.3 ms for 20 µs sleeps). A waiter therefore
// uses a Go timer only for the bulk of a long wait, a precise sleep for the
// part its measured overshoot leaves room for, and spins on the monotonic
// clock for the rest: sub-millisecond gaps without a core spent spinning.
const (
	// initialOvershoot is the first guess of how late a short sleep wakes;
	// each sleep then teaches the waiter its real lateness.
	initialOvershoot = 200 * time.Microsecond
	// timerAbove: longer waits sleep on a Go timer (which stop can cut
	// short) until timerMargin is left; the rest uses a precise sleep
	// (nanosleep on Linux, which wakes tens of microseconds late instead
	// of a millisecond), then spins.
	timerAbove = 3 * time.Millisecond
	// minSleep: a shorter sleep costs about as much as it saves.
	minSleep    = 100 * time.Microsecond
	timerMargin = 2 * time.Millisecond
	// maxOvershoot caps what one very late wake-up (a stalled VM) teaches:
	// above it, waits would spin forever and never measure again.
	maxOvershoot = 4 * time.Millisecond
)

// waiter blocks until a deadline on a monotonic clock (ns since base).
type waiter struct {
	base      time.Time
	spin      int64 // always spin for at least this last part
	spinning  bool  // spin at all; off, every wait sleeps to its deadline
	overshoot int64 // how late sleeps wake: the latest, or a decaying maximum
	timer     *time.Timer
	mono      int64 // CLOCK_MONOTONIC at base, for absolute sleeps; 0 until read
	// entered, when set (by tests), is called as a wait starts sleeping
	// (true) or spinning (false).
	entered func(sleeping bool)
}

func (w *waiter) now() int64 { return int64(time.Since(w.base)) }

// until waits until now() >= deadline. It returns false, early, if stop is
// closed.
func (w *waiter) until(deadline int64, stop <-chan struct{}) bool {
	for {
		left := deadline - w.now()
		if left <= 0 {
			return true
		}
		rest := left - w.spin // what may be slept at all
		if !w.spinning {
			rest = left
		}
		if !w.spinning && rest <= int64(timerAbove) {
			if w.entered != nil {
				w.entered(true)
			}
			sleepUntil(w.base, deadline, &w.mono)
			continue
		}
		if rest > int64(timerAbove) {
			if !w.sleep(rest-int64(timerMargin), stop) {
				return false
			}
			continue
		}
		d := rest - w.overshoot
		if d < int64(minSleep) {
			// No sleep worth its wake-up fits. Where one would with a lower
			// estimate, forget a little of the lateness, so that one bad
			// wake-up on a loaded machine does not mean spinning for the
			// rest of the test.
			if rest > 2*int64(minSleep) {
				w.overshoot -= w.overshoot / 64
			}
			break
		}
		if w.entered != nil {
			w.entered(true)
		}
		start := w.now()
		preciseSleep(time.Duration(d))
		w.learn(w.now() - start - d)
	}
	if w.entered != nil {
		w.entered(false)
	}
	for w.now() < deadline {
		select {
		case <-stop:
			return false
		default:
		}
	}
	return true
}

// sleep sleeps d ns on a Go timer, or until stop is closed.
func (w *waiter) sleep(d int64, stop <-chan struct{}) bool {
	if w.entered != nil {
		w.entered(true)
	}
	if w.timer == nil {
		w.timer = time.NewTimer(time.Duration(d))
	} else {
		// Since Go 1.23 Reset leaves no stale tick in the channel.
		w.timer.Reset(time.Duration(d))
	}
	select {
	case <-stop:
		w.timer.Stop()
		return false
	case <-w.timer.C:
	}
	return true
}

// learn takes one wake-up's lateness: a later one raises the estimate by
// half the difference (a late slot costs more than a little spinning, but
// one outlier should not decide), an earlier one lowers it by 1/16 of it.
func (w *waiter) learn(late int64) {
	late = min(max(late, 0), int64(maxOvershoot))
	if late >= w.overshoot {
		w.overshoot += (late - w.overshoot + 1) / 2
	} else {
		w.overshoot -= (w.overshoot - late) / 16
	}
}

// Sleeper sleeps to absolute deadlines as the rate pacer does: a Go
// timer for the bulk of a long wait, then an absolute precise sleep
// (clock_nanosleep on Linux), never spinning. An isochronous sender
// (udpflow) waits for its frames and their datagrams with it.
type Sleeper struct{ w waiter }

// NewSleeper returns a sleeper whose deadlines are on the monotonic clock
// of base.
func NewSleeper(base time.Time) *Sleeper { return &Sleeper{w: waiter{base: base}} }

// Until waits until t; it returns false, early, if stop is closed.
func (s *Sleeper) Until(t time.Time, stop <-chan struct{}) bool {
	return s.w.until(int64(t.Sub(s.w.base)), stop)
}
