package pace

import (
	"testing"
	"time"
)

// TestRateRule checks rate mode's rule as a pure function of now and of
// what was released: sleep to the next slot when on time, catch up at
// most Cap at once when late, and write off a debt beyond MaxDebt.
func TestRateRule(t *testing.T) {
	// 10 µs a datagram, 2 a slot (a slot every 20 µs), 5 at once, 20 owed.
	r := RateRule{Gap: 10_000, Burst: 2, Cap: 5, MaxDebt: 20}
	const us = int64(time.Microsecond)
	tests := []struct {
		name                     string
		now, released, notBefore int64
		n, at, written           int64
	}{
		{"the first slot at the start", 0, 0, 0, 2, 0, 0},
		{"the first slot sent: sleep to the second", 0, 2, 10 * us, 0, 20 * us, 0},
		{"just before the second slot", 20*us - 1, 2, 10 * us, 0, 20 * us, 0},
		{"the second slot on time", 20 * us, 2, 10 * us, 2, 20 * us, 0},
		{"half a slot late: the slot", 30 * us, 2, 10 * us, 2, 30 * us, 0},
		{"a part sent: the rest now", 25 * us, 3, 25 * us, 1, 25 * us, 0},
		{"ahead (sent two slots early): sleep to its slot", 20 * us, 6, 0, 0, 60 * us, 0},
		{"four slots late: catch up, five at once", 80 * us, 2, 0, 5, 80 * us, 0},
		{"catching up at twice the rate: wait 25 µs after five", 80 * us, 7, 105 * us, 0, 105 * us, 0},
		{"then the rest", 105 * us, 7, 105 * us, 5, 105 * us, 0},
		{"caught up: sleep", 105 * us, 12, 130 * us, 0, 130 * us, 0},
		{"a 1 ms stall: the debt beyond 20 is written off", 1000 * us, 10, 0, 5, 1000 * us, 102 - 10 - 20},
		{"exactly MaxDebt owed: nothing written off", 190 * us, 0, 0, 5, 190 * us, 0},
	}
	for _, tc := range tests {
		n, at, written := r.Decide(tc.now, RateState{Released: tc.released, NotBefore: tc.notBefore})
		if n != tc.n || at != tc.at || written != tc.written {
			t.Errorf("%s: Decide(%d, %d, %d) = %d, %d, %d; want %d, %d, %d",
				tc.name, tc.now, tc.released, tc.notBefore, n, at, written, tc.n, tc.at, tc.written)
		}
	}
	if st := r.Released(RateState{Released: 7}, 80*us, 5, 1); st != (RateState{Released: 13, NotBefore: 105 * us}) {
		t.Errorf("Released = %+v", st)
	}
}

// TestRateRuleHoldsTheRate replays a sender whose send takes longer than a
// datagram's gap (so it is late at every slot) on a simulated clock: the
// rule catches up, and the datagrams released by the end are the rate's.
func TestRateRuleHoldsTheRate(t *testing.T) {
	r := NewRateRule(Config{Interval: 40 * time.Microsecond, Burst: 1}) // 300 Mbit/s of 1500 B
	if r.Cap != int64(CatchUpSpan/(40*time.Microsecond)) || r.MaxDebt != int64(MaxDebtSpan/(40*time.Microsecond)) {
		t.Fatalf("rule %+v", r)
	}
	var now, sends int64
	var st RateState
	const end = int64(time.Second)
	for now < end {
		n, at, written := r.Decide(now, st)
		if written != 0 {
			t.Fatalf("wrote off %d at %d", written, now)
		}
		if n == 0 {
			now = at
			continue
		}
		if n > r.Cap {
			t.Fatalf("released %d > cap %d", n, r.Cap)
		}
		st = r.Released(st, now, n, 0)
		sends++
		now += 45_000 + 5_000*n // a send call: 45 µs (more than a gap), plus 5 µs a datagram
	}
	want, released := end/40_000, st.Released
	if released < want || released > want+r.Cap {
		t.Errorf("released %d datagrams in 1 s, want %d (the rate)", released, want)
	}
	if sends >= want {
		t.Errorf("%d send calls for %d datagrams: the late sender did not batch", sends, released)
	}
}

// TestRateRuleCPUBound: a sender that can't keep up (each datagram costs
// more than its gap) is held to what it can do, never more than Cap at
// once, and its debt is bounded: the schedule is written off beyond it.
func TestRateRuleCPUBound(t *testing.T) {
	r := NewRateRule(Config{Interval: 10 * time.Microsecond, Burst: 1})
	var now, written int64
	var st RateState
	for now < int64(time.Second) {
		n, at, w := r.Decide(now, st)
		written += w
		st = r.Released(st, now, n, w)
		if n == 0 {
			now = at
			continue
		}
		now += 15_000 * n
		if owed := (now/10_000 + 1) - st.Released; owed > r.MaxDebt+r.Cap*3/2+1 {
			t.Fatalf("owes %d at %d, more than the debt bound allows", owed, now)
		}
	}
	if written == 0 {
		t.Error("a sender at 2/3 of the rate had nothing written off")
	}
}

// TestRateSleeps runs the pacer on the real clock at 2,000 datagrams a
// second for 50 ms: it releases the rate's datagrams and spends the time
// asleep (the process's CPU time is a small part of the wall time).
func TestRateSleeps(t *testing.T) {
	p := NewRate(Config{Interval: 500 * time.Microsecond, Burst: 1})
	start := time.Now()
	p.Start(start)
	var sent int64
	for time.Since(start) < 50*time.Millisecond {
		n, ok := p.Next(nil, 64)
		if !ok {
			t.Fatal("Next stopped without stop")
		}
		p.Sent(n)
		sent += int64(n)
	}
	el := time.Since(start)
	// Never ahead of the schedule; behind it only by what a loaded machine
	// delays (the catch-up runs at twice the rate, so a late wake-up may
	// still be owed at the end).
	want := int64(el/(500*time.Microsecond)) + 1
	sp := p.Spacing()
	if sent > want+1 || sent < want-1-int64(sp.ErrMaxNs)/500_000 {
		t.Errorf("sent %d in %v, want %d (latest wake-up %.0f µs late)", sent, el, want, sp.ErrMaxNs/1e3)
	}
	if sp.TargetNs != 500_000 || sp.Samples == 0 {
		t.Errorf("spacing %+v", sp)
	}
	stop := make(chan struct{})
	close(stop)
	if _, ok := p.Next(stop, 1); ok {
		t.Error("Next released after stop")
	}
}
