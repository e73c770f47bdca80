package taskstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
)

// Start reserves and moves a run to running in one transaction; a run no
// longer scheduled starts nothing and reserves nothing, and a busy host
// leaves the run scheduled. Finish, in the report's transaction, ends the
// reservations and the run. PlanTasks's sequence numbers agree with LastSeq task by task.
func TestStartAndFinishARunInOneTransactionEach(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			bg := schedTask("ping", "a", "b")
			bg.Class = schedule.Background
			ex := schedTask("tput", "c", "b")
			ex2 := schedTask("tput", "d", "b")
			var runs []*SchedRun
			for _, tk := range []*schedule.Task{bg, ex, ex2} {
				if _, err := s.PutTask(ctx, tk, s0); err != nil {
					t.Fatal(err)
				}
				plan, _ := schedule.Plan(tk, -1, s0, time.Minute)
				for _, r := range plan {
					runs = append(runs, NewSchedRun(tk, r))
				}
			}
			if _, err := s.PlanRuns(ctx, runs, s0); err != nil {
				t.Fatal(err)
			}
			tasks, seqs, bad, err := s.PlanTasks(ctx, "c")
			if err != nil || len(bad) > 0 || len(tasks) != 1 || tasks[0].ID != ex.ID {
				t.Fatalf("c's tasks: %v %v %v", tasks, bad, err)
			}
			for _, tk := range []*schedule.Task{bg, ex, ex2} {
				want, _ := s.LastSeq(ctx, tk.ID)
				got, ok := seqs[tk.ID]
				if tk.Source != "c" {
					if ok {
						t.Errorf("PlanTasks of c lists %s's task", tk.Source)
					}
					continue
				}
				if !ok || got != want {
					t.Errorf("PlanTasks %s: %d (%v), want %d", tk.ID, got, ok, want)
				}
			}
			first := func(tk *schedule.Task) *SchedRun {
				for _, r := range runs {
					if r.TaskID == tk.ID && r.Seq == 0 {
						return r
					}
				}
				t.Fatalf("no run 0 of %s", tk.ID)
				return nil
			}
			rb, rx, rx2 := first(bg), first(ex), first(ex2)

			// A background run: reserved and running at once.
			if ok, err := s.Start(ctx, bg.Reservations(rb.ID, s0), rb.ID, s0); !ok || err != nil {
				t.Fatalf("background start: %v %v", ok, err)
			}
			if got, _ := s.GetSchedRun(ctx, rb.ID); got.State != archive.StateRunning || !got.ActualStart.Equal(s0) {
				t.Fatalf("after its start: %+v", got)
			}
			// Started again (a second attempt): not scheduled, so nothing.
			if ok, err := s.Start(ctx, bg.Reservations(rb.ID, s0), rb.ID, s0); ok || err != nil {
				t.Fatalf("a run started twice: %v %v", ok, err)
			}
			// An exclusive run; the next one on b is refused as busy and
			// stays scheduled, holding nothing.
			if ok, err := s.Start(ctx, ex.Reservations(rx.ID, s0), rx.ID, s0); !ok || err != nil {
				t.Fatalf("exclusive start: %v %v", ok, err)
			}
			ok, err := s.Start(ctx, ex2.Reservations(rx2.ID, s0.Add(time.Second)), rx2.ID, s0.Add(time.Second))
			var busy *schedule.Busy
			if ok || !errors.As(err, &busy) || busy.RunID != rx.ID {
				t.Fatalf("overlapping start: %v %v", ok, err)
			}
			if got, _ := s.GetSchedRun(ctx, rx2.ID); got.State != archive.StateScheduled {
				t.Fatalf("a busy run left %s", got.State)
			}
			// A run whose task changed (its scheduled runs dropped): nothing
			// starts, nothing is reserved.
			ex2.Args = []string{"client", "-t", "4"}
			if _, err := s.PutTask(ctx, ex2, s0); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Start(ctx, nil, rx2.ID, s0.Add(time.Minute)); ok || err != nil {
				t.Fatalf("a dropped run started: %v %v", ok, err)
			}
			before, _ := s.Reservations(ctx, s0, s0.Add(time.Hour))
			if ok, err := s.Start(ctx, ex2.Reservations(rx2.ID, s0.Add(time.Minute)), rx2.ID, s0.Add(time.Minute)); ok || err != nil {
				t.Fatalf("a dropped run started: %v %v", ok, err)
			}
			if after, _ := s.Reservations(ctx, s0, s0.Add(time.Hour)); len(after) != len(before) {
				t.Fatalf("a run that didn't start reserved: %d rows, were %d", len(after), len(before))
			}

			// The exclusive run ends: its report and its end in one
			// transaction; b is free from its end.
			ended := s0.Add(12 * time.Second)
			rec := sampleRun(rx.ID, "", 0)
			err = s.results.PutRunWith(ctx, rec, func(ctx context.Context, tx *sql.Tx) error {
				return s.Store.Finish(ctx, tx, rx.ID, archive.StateFinished, "", ended, ended)
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetSchedRun(ctx, rx.ID); got.State != archive.StateFinished || !got.Ended.Equal(ended) {
				t.Fatalf("after its finish: %+v", got)
			}
			if ok, err := s.Start(ctx, ex2.Reservations("next", ended), "next", ended); err != nil {
				var b *schedule.Busy
				if errors.As(err, &b) {
					t.Fatalf("b still held after the run's end: %v", b)
				}
			} else if ok {
				t.Fatal("a run never planned started")
			}
		})
	}
}
