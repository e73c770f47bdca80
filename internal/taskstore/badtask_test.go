package taskstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
)

// A task row whose dests (or args) column doesn't decode is passed over
// by ReadTasks with an error naming it, and its host's other tasks are
// read: one such row stopped the planning of all of them.
func TestReadTasksSkipsARowThatDoesNotDecode(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tasks := []*schedule.Task{schedTask("tput", "a", "b"), schedTask("tput", "a", "c"), schedTask("lat", "a", "d"), schedTask("tput", "b", "a")}
			if _, err := s.ApplyTasks(ctx, "m.yaml", tasks, s0); err != nil {
				t.Fatal(err)
			}
			for id, set := range map[string]string{
				tasks[0].ID: `dests = '{"hosts":["b","c"],"addrs":["b"],"at_ms":[0]}'`, // lists of different lengths
				tasks[2].ID: `args = '{not json'`,
			} {
				if _, err := s.db.ExecContext(ctx, s.q(`UPDATE sched_task SET `+set+` WHERE id = ?`), id); err != nil {
					t.Fatal(err)
				}
			}
			got, bad, err := s.ReadTasks(ctx, "a")
			if err != nil || len(got) != 1 || got[0].ID != tasks[1].ID || len(bad) != 2 {
				t.Fatalf("ReadTasks: %d tasks, %v bad, %v; want %s alone and 2 bad", len(got), bad, err, tasks[1].ID)
			}
			var be *BadTaskError
			if !errors.As(bad[0], &be) || be.ID != tasks[0].ID || be.Column != "dests" {
				t.Fatalf("the first bad row: %v", bad[0])
			}
			if all, bad, err := s.ReadTasks(ctx, ""); err != nil || len(all) != 2 || len(bad) != 2 {
				t.Fatalf("every host's: %d tasks, %d bad, %v", len(all), len(bad), err)
			}
			if _, err := s.Tasks(ctx, "a"); !errors.As(err, &be) {
				t.Fatalf("Tasks: %v, want the bad row's error", err)
			}
		})
	}
}

// The tasks' version changes with every change a reader's copy must
// see: a task added, updated, paused or removed.
func TestTasksVersionChangesWithTheTasks(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			version := func() TasksVersion {
				t.Helper()
				v, err := s.TasksVersion(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			seen := map[TasksVersion]string{version(): "empty"}
			check := func(what string) {
				t.Helper()
				v := version()
				if before, ok := seen[v]; ok {
					t.Fatalf("%s: the version %+v is %s's", what, v, before)
				}
				seen[v] = what
			}
			tk := schedTask("tput", "a", "b")
			if _, err := s.PutTask(ctx, tk, s0); err != nil {
				t.Fatal(err)
			}
			check("added")
			tk.Repeat = time.Minute
			if _, err := s.PutTask(ctx, tk, s0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			check("updated")
			if err := s.SetPaused(ctx, tk.ID, true, s0.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
			check("paused")
			if err := s.DeleteTask(ctx, tk.ID); err != nil {
				t.Fatal(err)
			}
			if v := version(); v.Count != 0 {
				t.Fatalf("removed: %+v", v)
			}
		})
	}
}
