package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

func ids(rs []*archive.SchedRun) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// The due list gives a run once its start is within the lead, in
// planned order, and never again once queued, across refreshes that
// still list it as scheduled; a refresh that no longer lists a queued
// run forgets it.
func TestDueRunsQueueEachRunOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	run := func(id string, at time.Duration) *archive.SchedRun {
		return &archive.SchedRun{ID: id, Planned: t0.Add(at)}
	}
	a, b, c := run("a", 10*time.Second), run("b", 3*time.Second), run("c", 20*time.Second)
	var q dueRuns
	q.refresh([]*archive.SchedRun{a, b, c})
	const lead = 5 * time.Second
	if got := ids(q.due(t0.Add(-3*time.Second), lead)); len(got) != 0 {
		t.Fatalf("8 s before the first run's start: %v due, want none", got)
	}
	if got := ids(q.due(t0.Add(-2*time.Second), lead)); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("exactly the lead before b: %v, want [b]", got)
	}
	if got := ids(q.due(t0.Add(5*time.Second), lead)); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("lead before a: %v, want [b a] (planned order)", got)
	}
	q.done(b)
	if got := ids(q.due(t0.Add(5*time.Second), lead)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("b queued: %v, want [a]", got)
	}
	// The archive still lists b as scheduled (its worker has not taken
	// it yet): it stays queued.
	q.refresh([]*archive.SchedRun{b, a, c})
	if got := ids(q.due(t0.Add(time.Minute), lead)); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after a refresh listing b again: %v, want [a c]", got)
	}
	// b was taken (no longer scheduled), then comes back scheduled (a
	// restore): it is queued again, since River dedupes it anyway.
	q.refresh([]*archive.SchedRun{a, c})
	q.refresh([]*archive.SchedRun{a, b, c})
	if got := ids(q.due(t0.Add(time.Minute), lead)); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("b forgotten and listed again: %v, want [b a c]", got)
	}
}

// Workers poll at half the lead, at most 2 s and never under River's
// cooldown, so a job available Lead before its run is fetched in time.
func TestFetchPollIsWithinTheLead(t *testing.T) {
	for _, c := range []struct{ lead, want time.Duration }{
		{DefaultLead, 2 * time.Second},
		{time.Second, 500 * time.Millisecond},
		{time.Minute, 2 * time.Second},
		{10 * time.Millisecond, 100 * time.Millisecond},
	} {
		if got := fetchPoll(c.lead); got != c.want {
			t.Errorf("lead %v: poll %v, want %v", c.lead, got, c.want)
		}
	}
}
