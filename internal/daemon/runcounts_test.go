package daemon

import (
	"context"
	"testing"
	"time"
)

// fakeRuns is one source's runs, counted in memory as the archive would.
type fakeRuns struct {
	planned []time.Time
	states  []string
	reads   int // queries, of either kind
}

func (f *fakeRuns) add(at time.Time, state string) int {
	f.planned = append(f.planned, at)
	f.states = append(f.states, state)
	return len(f.states) - 1
}

func (f *fakeRuns) StateCountsFromPlanned(_ context.Context, _ string, from, to time.Time) (map[string]int, error) {
	f.reads++
	out := map[string]int{}
	for i, p := range f.planned {
		if (from.IsZero() || !p.Before(from)) && (to.IsZero() || p.Before(to)) {
			out[f.states[i]]++
		}
	}
	return out, nil
}

func (f *fakeRuns) all() map[string]int {
	out := map[string]int{}
	for _, st := range f.states {
		out[st]++
	}
	return out
}

func sameCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// Every scrape's counts equal a count of the whole history, while the
// settled runs are read once an hour and the recent ones at each scrape.
func TestRunCountsMatchTheWholeHistory(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	db := &fakeRuns{}
	for i := 0; i < 500; i++ { // five days, one run every 15 minutes; a few failed
		st := "finished"
		if i%7 == 0 {
			st = "failed"
		}
		db.add(t0.Add(time.Duration(i)*15*time.Minute), st)
	}
	now := t0.Add(500 * 15 * time.Minute)
	var c runCounts
	check := func(when string) {
		t.Helper()
		got, err := c.counts(ctx, db, "h", now)
		if err != nil {
			t.Fatal(err)
		}
		if want := db.all(); !sameCounts(got, want) {
			t.Fatalf("%s: counts %v, want %v", when, got, want)
		}
	}
	check("first scrape")
	if c.reads != 1 {
		t.Fatalf("settled runs read %d times, want once", c.reads)
	}
	// A new run is scheduled, then runs, then finishes: each scrape sees
	// its state, without reading the settled runs again.
	i := db.add(now.Add(time.Minute), "scheduled")
	for _, st := range []string{"scheduled", "running", "finished"} {
		db.states[i] = st
		now = now.Add(15 * time.Second)
		check("new run " + st)
	}
	// A recent run's state changes (a late result).
	db.states[len(db.states)-3] = "aborted"
	check("a recent run changed")
	if c.reads != 1 {
		t.Errorf("settled runs read %d times within the hour, want once", c.reads)
	}
	reads := db.reads
	now = now.Add(settledRefresh)
	check("an hour later")
	if c.reads != 2 || db.reads != reads+2 {
		t.Errorf("after the hour: settled read %d times (want 2), %d queries (want 2 more than %d)", c.reads, db.reads, reads)
	}
	// A prune removes settled runs: the counts fall within the hour.
	db.planned, db.states = db.planned[100:], db.states[100:]
	now = now.Add(settledRefresh)
	check("after a prune, an hour later")
	// A clock stepped back re-reads rather than trusting a cutoff in the
	// future.
	now = now.Add(-3 * time.Hour)
	check("clock stepped back")
}
