package pace

import (
	"math"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// CatchUpSpan is how much of the schedule a late sender may send at once:
// a few hundred microseconds of data, so that catching up never floods
// the path with a stall's worth of datagrams.
const CatchUpSpan = 500 * time.Microsecond

// MaxDebtSpan is how much of the schedule a sender may owe before the rest
// is written off (RateRule.MaxDebt): enough for the stalls of a loaded
// machine (a woken thread that waits 10 ms for a CPU is common on two
// busy cores), repaid at twice the rate at most.
const MaxDebtSpan = 100 * time.Millisecond

// RateRule is rate mode's schedule, as a function of time alone: datagram
// k is due at k·Gap, released Burst at a time (the slot of datagram k is
// due at ⌊k/Burst⌋·Burst·Gap). A sender that is on time sleeps until its
// next slot; one that is late sends what it owes, at most Cap datagrams
// at once and at most twice the rate (n datagrams released, the next
// release waits n·Gap/2), until it has caught up, so that the average
// rate holds and catching up never floods. It never owes more than
// MaxDebt: beyond, a stall's datagrams are written off (and counted).
type RateRule struct {
	Gap     float64 // ns between datagrams at the rate
	Burst   int64   // datagrams per slot, ≥ 1
	Cap     int64   // the most released at once, ≥ Burst
	MaxDebt int64   // the most owed, ≥ Cap
}

// NewRateRule is the rule for cfg: its slot of Burst datagrams every
// Interval, a Cap of CatchUpSpan's worth of datagrams (at least a slot's,
// at most 1,024), and a debt of MaxDebtSpan's worth (at least four Caps).
func NewRateRule(cfg Config) RateRule {
	burst := int64(max(cfg.Burst, 1))
	gap := float64(cfg.Interval) / float64(burst)
	c, debt := burst, 4*burst
	if gap > 0 {
		c = max(burst, min(1024, int64(float64(CatchUpSpan)/gap)))
		debt = max(4*c, int64(float64(MaxDebtSpan)/gap))
	}
	return RateRule{Gap: gap, Burst: burst, Cap: c, MaxDebt: debt}
}

// RateState is what the rule decides from besides the time: how many
// datagrams were released (sent or written off), and the earliest the
// next release may go (the catch-up bound).
type RateState struct {
	Released  int64
	NotBefore int64
}

// Decide is the rule: at now (ns since the schedule's start), in state
// st, release n now; or, with n = 0, sleep until at. written is how many
// owed datagrams to write off first. Then call Released.
func (r RateRule) Decide(now int64, st RateState) (n, at, written int64) {
	slot := float64(r.Burst) * r.Gap
	due := (int64(math.Floor(float64(now)/slot)) + 1) * r.Burst // released by now, on schedule
	owed := due - st.Released
	if owed <= 0 {
		return 0, max(st.NotBefore, int64(math.Ceil(float64(st.Released/r.Burst)*slot))), 0
	}
	if owed > r.MaxDebt {
		written = owed - r.MaxDebt
		owed = r.MaxDebt
	}
	if now < st.NotBefore {
		return 0, st.NotBefore, written
	}
	return min(owed, r.Cap), now, written
}

// Released is the state after n datagrams went at now, and written were
// written off.
func (r RateRule) Released(st RateState, now, n, written int64) RateState {
	return RateState{Released: st.Released + n + written, NotBefore: now + int64(float64(n)*r.Gap/2)}
}

// Rate holds a sender to an average rate (RateRule), sleeping between
// slots on an absolute deadline and never spinning. A Rate is used by one
// goroutine; Spacing and the counts may be read once it is done.
type Rate struct {
	rule     RateRule
	start    time.Time
	timer    waiter
	st       RateState
	released int64    // datagrams released to the caller
	written  int64    // datagrams written off: owed beyond MaxDebt
	nowAt    int64    // when the last release was decided
	behind   int64    // releases that were late by more than a slot
	late     sendErrs // how late each release was
	releases int64
	firstAt  int64
	lastAt   int64
}

// NewRate returns a rate pacer for cfg; call Start.
func NewRate(cfg Config) *Rate {
	return &Rate{rule: NewRateRule(cfg), late: newSendErrs()}
}

// Rule is the pacer's rule.
func (p *Rate) Rule() RateRule { return p.rule }

// Start sets datagram 0 due at t, which must come from time.Now.
func (p *Rate) Start(t time.Time) {
	p.start = t
	p.timer = waiter{base: t}
}

// Next blocks until datagrams are due and returns how many to send now,
// at most most (≥ 1). It returns ok = false if stop is closed first. Call
// Sent with how many went.
func (p *Rate) Next(stop <-chan struct{}, most int) (n int, ok bool) {
	for {
		select {
		case <-stop:
			return 0, false
		default:
		}
		now := p.timer.now()
		k, at, written := p.rule.Decide(now, p.st)
		if written > 0 {
			p.st = p.rule.Released(p.st, p.st.NotBefore, 0, written)
			p.written += written
		}
		if k == 0 {
			if !p.timer.until(at, stop) {
				return 0, false
			}
			continue
		}
		p.nowAt = now
		// How late the first owed datagram is.
		late := now - int64(float64(p.st.Released/p.rule.Burst)*float64(p.rule.Burst)*p.rule.Gap)
		late = max(late, 0)
		if late > int64(float64(p.rule.Burst)*p.rule.Gap) {
			p.behind++
		}
		p.late.record(late)
		if p.releases == 0 {
			p.firstAt = now
		}
		p.lastAt = now
		p.releases++
		return int(min(k, int64(max(most, 1)))), true
	}
}

// Sent counts n datagrams as sent. Datagrams released but not sent (a
// full socket buffer) stay owed.
func (p *Rate) Sent(n int) {
	n = max(n, 0)
	p.st = p.rule.Released(p.st, p.nowAt, int64(n), 0)
	p.released += int64(n)
}

// WrittenOff is how many datagrams the schedule dropped because the
// sender was more than MaxDebt behind.
func (p *Rate) WrittenOff() int64 { return p.written }

// Behind is how many releases came more than a slot late.
func (p *Rate) Behind() int64 { return p.behind }

// Spacing summarises the schedule as it was kept: the target and mean gap
// between datagrams, and how late each release was (p50, p99, max).
func (p *Rate) Spacing() result.Spacing {
	s := result.Spacing{TargetNs: int64(math.Round(p.rule.Gap)), Samples: p.releases}
	if sent := p.released; sent > 1 {
		s.MeanNs = float64(p.lastAt-p.firstAt) / float64(sent-1)
	}
	if p.releases > 0 {
		p.late.fill(&s)
	}
	return s
}
