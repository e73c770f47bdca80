package taskstore

import (
	"context"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
)

// rotatingTask is a task from a to b, c and d in turn, each once every
// 3 minutes, a minute apart.
func rotatingTask() *schedule.Task {
	t := schedTask("probe", "a", "slot 0")
	t.Repeat = 3 * time.Minute
	t.Dests = []schedule.Destination{{Host: "b", Addr: "b:5201"}, {Host: "c", Addr: "10.0.0.3:6000", At: time.Minute}, {Host: "d", At: 2*time.Minute + 1500*time.Millisecond}}
	t.Dest, t.DestAddr = "b", "b:5201"
	return t
}

// A rotating task's destinations are stored with it and read back the
// same (applying it again changes nothing; new destinations update it),
// and each planned run is stored with its own destination.
func TestRotatingTaskRoundTrip(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tk := rotatingTask()
			if res, err := s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{tk}, s0); err != nil || res != (ApplyResult{Added: 1}) {
				t.Fatalf("apply: %+v %v", res, err)
			}
			got, err := s.GetTask(ctx, tk.ID)
			if err != nil || !sameTask(got, tk) || len(got.Dests) != 3 || got.Dests[2] != tk.Dests[2] {
				t.Fatalf("round trip:\n%+v\n%+v (%v)", got, tk, err)
			}
			if res, err := s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{tk}, s0); err != nil || res != (ApplyResult{Unchanged: 1}) {
				t.Fatalf("apply again: %+v %v", res, err)
			}
			changed := *tk
			changed.Dests = append([]schedule.Destination(nil), tk.Dests...)
			changed.Dests[1].Host = "e"
			if res, err := s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{&changed}, s0); err != nil || res != (ApplyResult{Updated: 1}) {
				t.Fatalf("apply with another destination: %+v %v", res, err)
			}
			list, err := s.Tasks(ctx, "a")
			if err != nil || len(list) != 1 || list[0].Dests[1].Host != "e" {
				t.Fatalf("tasks of a: %+v %v", list, err)
			}

			toRun, _ := schedule.Plan(list[0], -1, s0, 4*time.Minute)
			var rows []*SchedRun
			for _, r := range toRun {
				rows = append(rows, NewSchedRun(list[0], r))
			}
			if _, err := s.PlanRuns(ctx, rows, s0); err != nil {
				t.Fatal(err)
			}
			for seq, want := range []string{"b", "e", "d", "b"} {
				r, err := s.GetSchedRun(ctx, schedule.RunID(tk.ID, seq))
				if err != nil || r.Dest != want || r.Source != "a" {
					t.Fatalf("run %d: %+v %v, want to %s", seq, r, err, want)
				}
			}
			if r, _ := s.GetSchedRun(ctx, schedule.RunID(tk.ID, 2)); !r.Planned.Equal(s0.Add(2*time.Minute + 1500*time.Millisecond)) {
				t.Fatalf("run 2 planned at %v", r.Planned)
			}
			if runs, err := s.SchedRuns(ctx, RunQuery{Dest: "e"}); err != nil || len(runs) != 1 || runs[0].Seq != 1 {
				t.Fatalf("runs to e: %+v %v", runs, err)
			}
		})
	}
}

// A task stored before migration 8 (no dests column: the migration gave
// it the column's default) reads back as a task of one destination, and
// is unchanged when applied again. TestArchiveFromMain opens a whole
// archive of that time.
func TestTaskBeforeDestsMigration(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tk := schedTask("tput", "a", "b")
			cols := `id, name, source, dest, dest_addr, args, direction, class, duration_ms, start_at, repeat_ms,
				slip_ms, random_slip_ms, until_at, max_runs, paused, resources, thresholds, origin, mesh_group, created, updated`
			args := taskArgs(tk)
			if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO sched_task (`+cols+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), append(args[:len(args)-1], s0, s0)...); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetTask(ctx, tk.ID)
			if err != nil || got.Rotating() || !sameTask(got, tk) {
				t.Fatalf("old task: %+v %v", got, err)
			}
			if res, err := s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{tk}, s0); err != nil || res != (ApplyResult{Unchanged: 1}) {
				t.Fatalf("apply: %+v %v", res, err)
			}
		})
	}
}
