// Package pace holds a sender to a schedule of send slots.
package pace

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// Pacer holds a sender to a schedule: slot k is due at start + k*Interval.
// Each slot releases Burst datagrams (1 = no burst): the caller sends
// them, the pacer only keeps time.
//
// It never catches up by bursting. A slot is released at most one interval
// late, and never less than half an interval after the previous Sent; a
// slot that can't be is skipped (and counted by Skipped), keeping the
// schedule's phase. A sender that falls behind by more than a slot, by a
// stall or because the send call is slower than the interval, sends at a
// lower rate instead of sending the missed slots back to back.
//
// Waiting sleeps, to an absolute deadline. With Config.Spin it sleeps
// only the long part of a wait and busy-waits on the monotonic clock for
// the last part (Config.SpinThreshold plus the sleep overshoot the pacer
// has measured): at intervals below a millisecond or so the sending
// goroutine then keeps a CPU busy. The caller may runtime.LockOSThread
// that goroutine (and LowTimerSlack it) so it is not moved between
// threads mid-schedule; the pacer does neither itself.
//
// A Pacer is used by one goroutine; Spacing may be read once it is done.
type Pacer struct {
	interval int64 // ns
	w        waiter
	start    time.Time
	started  bool

	next    int64 // the next slot's index
	skipped int64
	open    bool  // a slot was released and awaits Sent
	slotAt  int64 // its scheduled time, ns since start

	sent                int64    // Sent calls
	firstSent, lastSent int64    // ns since start
	errs                sendErrs // |sent - scheduled|
	gaps                sendErrs // sent - the previous send
}

// New returns a pacer for cfg; call Start, or the first Wait starts it.
func New(cfg Config) *Pacer {
	spin := cfg.SpinThreshold
	if spin <= 0 {
		spin = DefaultSpinThreshold
	}
	if !cfg.Spin {
		spin = 0
	}
	return &Pacer{
		interval: int64(max(cfg.Interval, 0)),
		w:        waiter{spin: int64(spin), spinning: cfg.Spin, overshoot: int64(initialOvershoot)},
		errs:     newSendErrs(),
		gaps:     newSendErrs(),
	}
}

// Start sets slot 0 at t and clears the figures. t must come from
// time.Now, so that waits use the monotonic clock.
func (p *Pacer) Start(t time.Time) {
	p.start, p.started = t, true
	p.w.base, p.w.mono = t, 0
	p.next, p.skipped, p.open = 0, 0, false
	p.sent, p.firstSent, p.lastSent = 0, 0, 0
	p.errs.reset()
	p.gaps.reset()
}

// Wait blocks until the next slot is due, then returns its scheduled time.
// It returns ok=false if stop is closed while waiting. With Interval 0 it
// returns at once, with the current time.
func (p *Pacer) Wait(stop <-chan struct{}) (slot time.Time, ok bool) {
	select {
	case <-stop:
		return time.Time{}, false
	default:
	}
	if !p.started {
		p.Start(time.Now())
	}
	iv := p.interval
	if iv <= 0 {
		p.slotAt, p.open = p.w.now(), true
		return p.start.Add(time.Duration(p.slotAt)), true
	}
	for {
		next, skipped, until, wait := slotRule(iv, p.w.now(), p.next, p.sent, p.lastSent)
		p.next, p.skipped = next, p.skipped+skipped
		if wait {
			if !p.w.until(until, stop) {
				return time.Time{}, false
			}
			continue // woken late, perhaps: judge again
		}
		due := p.next * iv
		p.next++
		p.slotAt, p.open = due, true
		return p.start.Add(time.Duration(due)), true
	}
}

// slotRule is spacing mode's rule, a pure function of now (ns since the
// start): slot next is due at next×iv, and may go no earlier than its
// time and half an interval after the last send (sent of them so far,
// the last at lastSent), so that a late send is not followed by a burst.
// A slot that would go more than one interval late is skipped, which
// keeps the schedule's phase. It returns the slot to release (after
// skipping skipped), or, with wait, the instant to wait until before
// judging again (slot 0 of a schedule that starts in the future waits
// until 0).
func slotRule(iv, now, next, sent, lastSent int64) (slot, skipped, until int64, wait bool) {
	for {
		due := next * iv
		earliest := due
		if sent > 0 {
			earliest = max(earliest, lastSent+iv/2)
		}
		if late := max(now, earliest) - due - iv; late > 0 {
			k := (late + iv - 1) / iv // slots that would go more than a slot late
			next += k
			skipped += k
			continue
		}
		if now < earliest {
			return next, skipped, earliest, true
		}
		return next, skipped, 0, false
	}
}

// Sent records that the slot's datagrams left at t. Take t with time.Now
// right before the send call, the same instant the datagrams carry as their
// send time, so that the sender's spacing and the receiver's delays refer
// to one moment; the send call's own duration is then not pacing error.
// Call it once per slot Wait released, also if the send failed (the slot
// was used); further calls before the next Wait are ignored.
func (p *Pacer) Sent(t time.Time) {
	p.sentAt(int64(t.Sub(p.start)))
}

func (p *Pacer) sentAt(at int64) {
	if !p.open {
		return
	}
	p.open = false
	e := at - p.slotAt
	if e < 0 {
		e = -e
	}
	p.errs.record(e)
	if p.sent == 0 {
		p.firstSent = at
	} else {
		p.gaps.record(max(at-p.lastSent, 0))
	}
	p.lastSent = at
	p.sent++
}

// Skipped is how many slots were skipped because the sender was late.
func (p *Pacer) Skipped() int64 { return p.skipped }

// Spacing summarises the achieved spacing: the mean gap between Sent
// times (skipped slots included, so it reflects the achieved rate), and
// the p50, p99 and maximum of |sent - scheduled| over the slots sent.
func (p *Pacer) Spacing() result.Spacing {
	s := result.Spacing{TargetNs: p.interval, Samples: p.sent}
	if p.sent > 1 {
		s.MeanNs = float64(p.lastSent-p.firstSent) / float64(p.sent-1)
	}
	if p.sent > 0 {
		p.errs.fill(&s)
	}
	if p.sent > 1 {
		var g result.Spacing
		p.gaps.fill(&g)
		s.GapP50Ns, s.GapP99Ns = g.ErrP50Ns, g.ErrP99Ns
	}
	return s
}
