package daemon

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// A rotating task's pairs past its first destination are in the grid's
// copy of the last results: read from the recent runs at the first load,
// and kept by each later reload while they are scheduled (the reload's
// query lists each task's first destination only).
func TestLastResultsKeepRotatingPairs(t *testing.T) {
	ctx := context.Background()
	st, err := archive.Open(ctx, filepath.Join(t.TempDir(), "grid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	now := time.Now().Truncate(time.Second)
	tk := &schedule.Task{ID: "rot", Name: "tput", Source: "a", Dest: "b", Args: []string{"client", "-t", "1"},
		Class: schedule.Exclusive, Duration: time.Second, Start: now.Add(-time.Hour), Repeat: time.Minute, Slip: 10 * time.Second,
		Dests: []schedule.Destination{{Host: "b"}, {Host: "c", At: 20 * time.Second}, {Host: "d", At: 40 * time.Second}}}
	if _, err := sched.PutTask(ctx, tk, now); err != nil {
		t.Fatal(err)
	}
	// Its run to c, finished a minute ago.
	r, _ := tk.ForRun(1).At(1)
	sr := taskstore.NewSchedRun(tk.ForRun(1), r)
	if _, err := sched.PlanRuns(ctx, []*taskstore.SchedRun{sr}, now.Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	ended := now.Add(-time.Minute)
	if ok, err := sched.Transition(ctx, sr.ID, []string{archive.StateScheduled}, archive.StateFinished, "", ended.Add(-time.Second), ended, ended); !ok || err != nil {
		t.Fatalf("transition: %v %v", ok, err)
	}
	scheduled := map[taskstore.PairKey]bool{}
	for _, h := range tk.DestHosts() {
		scheduled[taskstore.PairKey{Source: "a", Dest: h, Test: "tput", Direction: sr.Direction}] = true
	}
	pairs := func(c *lastResults, at time.Time, rotating time.Duration) map[string]string {
		got := map[string]string{}
		if err := c.each(ctx, taskstore.New(st), at, rotating, func(k taskstore.PairKey) bool { return scheduled[k] }, func(k taskstore.PairKey, p taskstore.PairStatus) {
			got[k.Source+"→"+k.Dest] = p.State
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	rotation := time.Duration(len(tk.Dests)) * tk.Repeat
	var c lastResults
	if got := pairs(&c, now, rotation); got["a→c"] != archive.StateFinished || len(got) != 1 {
		t.Fatalf("first load: %v, want a→c finished", got)
	}
	if got := pairs(&c, now.Add(fullReload), rotation); got["a→c"] != archive.StateFinished {
		t.Fatalf("after a whole reload: %v, want a→c kept", got)
	}
	delete(scheduled, taskstore.PairKey{Source: "a", Dest: "c", Test: "tput", Direction: sr.Direction})
	if got := pairs(&c, now.Add(2*fullReload), rotation); len(got) != 0 {
		t.Fatalf("a→c no longer scheduled, after a reload: %v, want nothing", got)
	}
}
