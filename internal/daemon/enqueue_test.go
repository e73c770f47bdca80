package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/taskstore"
)

func ids(rs []*taskstore.SchedRun) []string {
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
	run := func(id string, at time.Duration) *taskstore.SchedRun {
		return &taskstore.SchedRun{ID: id, Planned: t0.Add(at)}
	}
	a, b, c := run("a", 10*time.Second), run("b", 3*time.Second), run("c", 20*time.Second)
	var q dueRuns
	q.refresh([]*taskstore.SchedRun{a, b, c})
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
	q.refresh([]*taskstore.SchedRun{b, a, c})
	if got := ids(q.due(t0.Add(time.Minute), lead)); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after a refresh listing b again: %v, want [a c]", got)
	}
	// b was taken (no longer scheduled), then comes back scheduled (a
	// restore): it is queued again, since River dedupes it anyway.
	q.refresh([]*taskstore.SchedRun{a, c})
	q.refresh([]*taskstore.SchedRun{a, b, c})
	if got := ids(q.due(t0.Add(time.Minute), lead)); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("b forgotten and listed again: %v, want [b a c]", got)
	}
}

// Hosts plan in phases their names spread over half of PlanEvery, each
// within it, so that daemons started together do not plan together.
func TestPlanPhasesSpread(t *testing.T) {
	const every = 30 * time.Second
	var lo, hi time.Duration = every, 0
	for i := range 200 {
		p := planPhase(fmt.Sprintf("vh%04d", i), every)
		if p < 0 || p > every/2 {
			t.Fatalf("phase %v outside [0, %v]", p, every/2)
		}
		lo, hi = min(lo, p), max(hi, p)
	}
	if hi-lo < every/4 {
		t.Errorf("200 hosts' phases span %v to %v, want them spread over most of %v", lo, hi, every/2)
	}
	if planPhase("a", every) != planPhase("a", every) {
		t.Error("a host's phase changes")
	}
}

// A run's job is available as soon as it is queued: not "scheduled",
// which only River's leader makes available, every 5 s.
func TestQueuedJobIsAvailableAtOnce(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "queue.db")
	d, err := New(context.Background(), Config{Host: "a", DSN: dsn, Logger: slog.New(slog.DiscardHandler), SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.store.Close()
	defer d.queue.Close()
	if err := d.queue.Enqueue(context.Background(), "a", "run-1"); err != nil {
		t.Fatal(err)
	}
	db, err := archive.OpenSQLitePool(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var state string
	if err := db.QueryRow(`SELECT state FROM river_job WHERE queue = ?`, QueueName("a")).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "available" {
		t.Fatalf("the queued job is %q, want available", state)
	}
}

// A host plans at once, then PlanEvery later less its phase, then every
// PlanEvery: the timer planLoop asks, on an injected clock.
func TestPlanTimerKeepsTheHostsPhase(t *testing.T) {
	const every = 30 * time.Second
	host := "vh0007"
	phase := planPhase(host, every)
	if phase == 0 {
		t.Fatal("pick a host whose phase is not 0")
	}
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	p := planTimer{host: host, every: every}
	var plans []time.Duration
	for at := time.Duration(0); at <= 3*every; at += time.Second / 4 {
		if p.due(t0.Add(at)) {
			plans = append(plans, at)
		}
	}
	second := (every - phase + time.Second/4 - 1).Truncate(time.Second / 4) // the first tick at or after every − phase
	want := []time.Duration{0, second, second + every, second + 2*every}
	if second+2*every > 3*every {
		want = want[:3]
	}
	if !slices.Equal(plans, want) {
		t.Errorf("plans at %v, want %v (phase %v)", plans, want, phase)
	}
}

// The runs a plan stores join the list; a run past its deadline is
// overdue whether it was queued or not, unless its worker took it.
func TestDueRunsAddAndOverdue(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	run := func(id string, at time.Duration) *taskstore.SchedRun {
		return &taskstore.SchedRun{ID: id, Planned: t0.Add(at), Deadline: t0.Add(at + 10*time.Second), State: archive.StateScheduled}
	}
	var q dueRuns
	a, b, c, d := run("a", 0), run("b", time.Minute), run("c", 2*time.Minute), run("d", 3*time.Minute)
	q.refresh([]*taskstore.SchedRun{a})
	missed := run("m", 0)
	missed.State = archive.StateMissed
	q.add([]*taskstore.SchedRun{c, a, b, missed})
	if got := ids(q.due(t0.Add(3*time.Minute), time.Second)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("after add: %v, want [a b c] (a once, the missed run left out)", got)
	}
	q.done(a)
	q.done(b)
	q.taken("b")
	q.add([]*taskstore.SchedRun{d})
	if q.known("a") != a || q.known("b") != nil {
		t.Fatalf("known: a %v, b %v", q.known("a"), q.known("b"))
	}
	// At c's deadline: a (queued, never taken) and nothing else; b was
	// taken by its worker, c's deadline is not before t.
	if got := ids(q.overdue(c.Deadline)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("overdue: %v, want [a]", got)
	}
	if got := ids(q.overdue(c.Deadline.Add(time.Millisecond))); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("overdue next: %v, want [c]", got)
	}
	if got := ids(q.due(t0.Add(time.Hour), time.Second)); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("left: %v, want [d]", got)
	}
}
