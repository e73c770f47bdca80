package schedule

import (
	"errors"
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/measure"
)

// Reservation holds a resource for a run over [From, To).
type Reservation struct {
	Resource string
	From, To time.Time
	RunID    string
	Class    Class
}

// Conflicts says whether two reservations may not both hold: the same
// resource, overlapping times, and both exclusive. The archive enforces
// the same rule (an exclusion constraint on PostgreSQL, a check inside
// one write transaction on SQLite); this is its statement in Go.
func Conflicts(a, b Reservation) bool {
	return a.Resource == b.Resource && a.Class == Exclusive && b.Class == Exclusive &&
		a.RunID != b.RunID && a.From.Before(b.To) && b.From.Before(a.To)
}

// Hold is the longest a run of t may take: twice its planned time and a
// minute. A run is stopped when it has run that long, and its lease is
// never renewed past it.
func (t *Task) Hold() time.Duration { return 2*t.Duration + time.Minute }

// A run's reservations are leases: they hold for LeaseTTL, and the
// daemon running the test renews them every LeaseRenew until the test
// ends (and releases them then). A daemon that dies stops renewing, so
// its hosts are free again within LeaseTTL, not at the end of the
// longest its run could have taken.
const (
	LeaseTTL   = 15 * time.Second
	LeaseRenew = 5 * time.Second
)

// LeaseEnd is where a lease taken at from and renewed at now ends:
// LeaseTTL after now, but never past from+hold.
func LeaseEnd(from, now time.Time, hold time.Duration) time.Time {
	end := now.Add(LeaseTTL)
	if limit := from.Add(hold); end.After(limit) {
		return limit
	}
	return end
}

// LeaseLost says whether a running test must stop at now because its
// lease, which holds until held (where its last renewal left it), may
// lapse before the test ends: its next renewal, LeaseRenew from now,
// would come at or after held, and once the lease lapses another run may
// take its hosts. Stopping a renewal early leaves the test that long to
// end. A lease at its limit (the run's start + its hold) ends with the
// test's own bound, and is never lost.
func LeaseLost(held, now, limit time.Time) bool {
	return held.Before(limit) && !now.Add(LeaseRenew).Before(held)
}

// Reservations are the rows a run of t starting at from reserves: each
// resource for the first lease (LeaseEnd).
func (t *Task) Reservations(runID string, from time.Time) []Reservation {
	var out []Reservation
	for _, r := range t.ReservedResources() {
		out = append(out, Reservation{Resource: r, From: from, To: LeaseEnd(from, from, t.Hold()), RunID: runID, Class: t.Class})
	}
	return out
}

// Busy is a conflict found when reserving: which run holds the resource,
// and until when.
type Busy struct {
	Resource string
	RunID    string
	Until    time.Time
}

func (b *Busy) Error() string {
	return fmt.Sprintf("%s is reserved by run %s until %s", b.Resource, b.RunID, b.Until.UTC().Format(time.RFC3339))
}

// NextTry decides what a run does when its reservation meets busy at
// now: look again at the holder's end or after poll, whichever comes
// first (a holder releases its reservation when it ends, usually well
// before the reservation's end), or give up when that would be past the
// run's deadline. The reason says why, for the run's record.
func NextTry(r Run, busy *Busy, now time.Time, poll time.Duration) (at time.Time, ok bool, reason string) {
	at = now.Add(poll)
	if busy.Until.After(now) && busy.Until.Before(at) {
		at = busy.Until
	}
	if at.After(r.Deadline) {
		return time.Time{}, false, fmt.Sprintf("no slot within slip: %v (deadline %s)", busy, r.Deadline.UTC().Format(time.RFC3339))
	}
	return at, true, ""
}

// Late says whether a run picked up at now may still start: a run never
// starts after its deadline.
func Late(r Run, now time.Time) (bool, string) {
	if now.After(r.Deadline) {
		return true, fmt.Sprintf("picked up %s after its planned start, past its slip", now.Sub(r.Planned).Round(time.Millisecond))
	}
	return false, ""
}

// ReserveMargin is added to a test's length for its set-up and its
// report.
const ReserveMargin = 2 * time.Second

// ReserveFor is how long a run of a test line holds its hosts by
// default: the test's length as its model tells it (-O, -n at a rate,
// rr's sizes × -t, udpmon's grid) and ReserveMargin. A test whose length
// its flags don't tell (-n as fast as the path allows) needs its
// reservation given. Mesh files and the daemon's API reserve by it.
func ReserveFor(args []string) (time.Duration, error) {
	t, err := measure.ParseLine(args)
	if err != nil {
		return 0, err
	}
	return ReserveOf(t)
}

// ReserveOf is ReserveFor of a test already parsed (a mesh file's line,
// read once).
func ReserveOf(t measure.Test) (time.Duration, error) {
	d, ok := t.Duration()
	if !ok {
		return 0, errors.New("its length can't be told from its flags (-n without a rate, or rr --count without -t or --interval): give reserve")
	}
	return d + ReserveMargin, nil
}
