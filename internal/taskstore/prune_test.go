package taskstore

import (
	"context"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// archive prune removes, with the archive's old runs and in the same
// transaction, the schedule's runs planned before the cut that no longer
// wait or run, and the reservations that ended before it; a run still
// waiting and a future reservation stay, and a dry run counts the same
// and removes nothing.
func TestPrune(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	old := now.AddDate(0, 0, -500)
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			r := sampleRun("old-2", "", 0)
			r.Started, r.Ended, r.Recorded = old, old.Add(10*time.Second), old.Add(11*time.Second)
			if err := s.PutRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			// Planned long ago: one finished (goes), one still waiting
			// (stays, whatever its age), and one planned now.
			if _, err := s.db.Exec(s.Store.q(`INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, state, updated)
				VALUES (?, 't', 1, 'a', 'b', 'tcp', 'up', 'exclusive', ?, ?, ?, ?), (?, 't', 2, 'a', 'b', 'tcp', 'up', 'exclusive', ?, ?, ?, ?),
				(?, 't', 3, 'a', 'b', 'tcp', 'up', 'exclusive', ?, ?, ?, ?)`),
				"old-2", old, old, archive.StateFinished, old, "stuck", old, old, archive.StateScheduled, old, "next", now, now, archive.StateScheduled, now); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.Exec(s.Store.q(`INSERT INTO reservation (resource, lo, hi, run_id, class) VALUES (?, ?, ?, ?, 'exclusive'), (?, ?, ?, ?, 'exclusive')`),
				"host:a", old, old.Add(time.Minute), "old-2", "host:a", now, now.Add(time.Minute), "next"); err != nil {
				t.Fatal(err)
			}
			count := func(q string) int {
				t.Helper()
				var n int
				if err := s.db.QueryRow(q).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			req := archive.PruneRequest{OlderThan: 400 * 24 * time.Hour, Now: now, DryRun: true}
			dry, err := Prune(ctx, s.results, req)
			if err != nil {
				t.Fatal(err)
			}
			if dry.Runs != 1 || dry.SchedRuns != 1 || dry.Reservations != 1 {
				t.Errorf("dry run = %+v; want 1 run, 1 scheduled run, 1 reservation", dry)
			}
			if count(`SELECT COUNT(*) FROM sched_run`) != 3 || count(`SELECT COUNT(*) FROM reservation`) != 2 || count(`SELECT COUNT(*) FROM run`) != 1 {
				t.Fatal("the dry run removed something")
			}
			req.DryRun = false
			got, err := Prune(ctx, s.results, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Runs != 1 || got.SchedRuns != 1 || got.Reservations != 1 || !got.Before.Equal(now.AddDate(0, 0, -400)) {
				t.Errorf("prune = %+v; want 1 run, 1 scheduled run, 1 reservation before %s", got, now.AddDate(0, 0, -400))
			}
			if count(`SELECT COUNT(*) FROM sched_run WHERE id IN ('stuck', 'next')`) != 2 || count(`SELECT COUNT(*) FROM sched_run`) != 2 {
				t.Error("prune took a waiting scheduled run, or left the finished one")
			}
			if count(`SELECT COUNT(*) FROM reservation WHERE run_id = 'next'`) != 1 || count(`SELECT COUNT(*) FROM reservation`) != 1 {
				t.Error("reservations left are not the future one alone")
			}
			if count(`SELECT COUNT(*) FROM run`) != 0 {
				t.Error("the old run stayed")
			}
		})
	}
}
