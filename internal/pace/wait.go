package pace

import "time"

// Go's timers wake late: the runtime's poller sleeps in whole
// milliseconds, so a sleep of 50 µs typically takes ~1.1 ms on an idle
// Linux process (measured: p50 1.1 ms, p99 1.3 ms for 20 µs sleeps), and
// Windows and virtual machines can be worse. A waiter therefore sleeps only
// for the part of a wait that its measured overshoot leaves room for, and
// spins on the monotonic clock for the rest.
const (
	initialOvershoot = time.Millisecond
	// maxOvershoot caps what one very late wake-up (a stalled VM) teaches:
	// above it, waits would spin forever and never measure again.
	maxOvershoot = 4 * time.Millisecond
)

// waiter blocks until a deadline on a monotonic clock (ns since base).
type waiter struct {
	base      time.Time
	spin      int64 // always spin for at least this last part
	overshoot int64 // how late sleeps wake: the latest, or a decaying maximum
	timer     *time.Timer
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
		d := left - w.spin - w.overshoot
		if d <= 0 {
			break
		}
		if !w.sleep(d, stop) {
			return false
		}
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

// sleep sleeps d ns, or until stop is closed, and learns how late it woke.
func (w *waiter) sleep(d int64, stop <-chan struct{}) bool {
	if w.entered != nil {
		w.entered(true)
	}
	start := w.now()
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
	w.learn(w.now() - start - d)
	return true
}

// learn takes one wake-up's lateness: a later one raises the estimate at
// once (a late slot costs more than a little spinning), an earlier one
// lowers it by 1/16 of the difference.
func (w *waiter) learn(late int64) {
	late = min(max(late, 0), int64(maxOvershoot))
	if late >= w.overshoot {
		w.overshoot = late
	} else {
		w.overshoot -= (w.overshoot - late) / 16
	}
}
