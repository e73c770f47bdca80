package taskstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
)

var s0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func schedTask(name, src, dst string) *schedule.Task {
	return &schedule.Task{ID: schedule.DefineID("m.yaml", name, src, dst), Name: name, Source: src, Dest: dst, DestAddr: dst + ":5201",
		Args: []string{"client", "-t", "5"}, Class: schedule.Exclusive, Duration: 10 * time.Second,
		Start: s0, Repeat: 30 * time.Second, Slip: 5 * time.Second, Origin: "m.yaml", Group: "all",
		Thresholds: schedule.Thresholds{GoodputAmberBps: 500e6, GoodputRedBps: 100e6, StaleIntervals: 2}}
}

func TestTasksApplyIdempotent(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tasks := []*schedule.Task{schedTask("tput", "a", "b"), schedTask("tput", "b", "a"), schedTask("tput", "a", "c")}
			res, err := s.ApplyTasks(ctx, "m.yaml", tasks, s0)
			if err != nil || res != (ApplyResult{Added: 3}) {
				t.Fatalf("first apply: %+v %v", res, err)
			}
			res, err = s.ApplyTasks(ctx, "m.yaml", tasks, s0)
			if err != nil || res != (ApplyResult{Unchanged: 3}) {
				t.Fatalf("second apply changed something: %+v %v", res, err)
			}
			got, err := s.GetTask(ctx, tasks[0].ID)
			if err != nil || !sameTask(got, tasks[0]) {
				t.Fatalf("round trip:\n%+v\n%+v (%v)", got, tasks[0], err)
			}
			// A changed repeat updates; a task left out is removed.
			changed := *tasks[0]
			changed.Repeat = time.Minute
			res, err = s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{&changed, tasks[1]}, s0)
			if err != nil || res != (ApplyResult{Updated: 1, Unchanged: 1, Removed: 1}) {
				t.Fatalf("third apply: %+v %v", res, err)
			}
			list, err := s.Tasks(ctx, "a")
			if err != nil || len(list) != 1 || list[0].Repeat != time.Minute {
				t.Fatalf("tasks of a: %v %v", list, err)
			}
			if err := s.SetPaused(ctx, changed.ID, true, s0); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetTask(ctx, changed.ID); !got.Paused {
				t.Fatal("not paused")
			}
			if err := s.DeleteTask(ctx, changed.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteTask(ctx, changed.ID); !errors.Is(err, archive.ErrNotFound) {
				t.Fatalf("deleting twice: %v", err)
			}
			bad := *tasks[1]
			bad.Slip = -time.Second
			if _, err := s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{tasks[0], &bad}, s0); err == nil {
				t.Fatal("an invalid task was applied")
			}
			if all, _ := s.Tasks(ctx, ""); len(all) != 1 {
				t.Fatalf("a failed apply changed the tasks: %d", len(all))
			}
		})
	}
}

func TestPlanTransitionQueries(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tk := schedTask("tput", "a", "b")
			if _, err := s.PutTask(ctx, tk, s0); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.LastSeq(ctx, tk.ID); n != -1 {
				t.Fatalf("last seq of a new task %d", n)
			}
			plan, _ := schedule.Plan(tk, -1, s0, 2*time.Minute)
			var runs []*SchedRun
			for _, r := range plan {
				runs = append(runs, NewSchedRun(tk, r))
			}
			added, err := s.PlanRuns(ctx, runs, s0)
			if err != nil || len(added) != 4 {
				t.Fatalf("planned %d: %v", len(added), err)
			}
			if added, _ := s.PlanRuns(ctx, runs, s0); len(added) != 0 {
				t.Fatalf("planning again added %d", len(added))
			}
			if n, _ := s.LastSeq(ctx, tk.ID); n != 3 {
				t.Fatalf("last seq %d", n)
			}
			// Run 0 finishes 0.4 s late with a result; run 1 fails; run 2 is
			// missed; run 3 was running when its daemon died.
			start := s0.Add(400 * time.Millisecond)
			if ok, err := s.Transition(ctx, runs[0].ID, []string{archive.StateScheduled}, archive.StateRunning, "", start, time.Time{}, s0); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if ok, _ := s.Transition(ctx, runs[0].ID, []string{archive.StateScheduled}, archive.StateRunning, "", start, time.Time{}, s0); ok {
				t.Fatal("a run was taken twice")
			}
			s.Transition(ctx, runs[0].ID, []string{archive.StateRunning}, archive.StateFinished, "", time.Time{}, start.Add(5*time.Second), s0)
			rec := sampleRun(runs[0].ID, "", 0)
			rec.Summary.ReceivedBps = f64(9.4e8)
			if err := s.PutRun(ctx, rec); err != nil {
				t.Fatal(err)
			}
			s.Transition(ctx, runs[1].ID, []string{archive.StateScheduled}, archive.StateRunning, "", s0.Add(30*time.Second+time.Second), time.Time{}, s0)
			s.Transition(ctx, runs[1].ID, []string{archive.StateRunning}, archive.StateFailed, "connection refused", time.Time{}, s0.Add(32*time.Second), s0)
			s.Transition(ctx, runs[2].ID, []string{archive.StateScheduled}, archive.StateMissed, "no slot within slip", time.Time{}, time.Time{}, s0)
			s.Transition(ctx, runs[3].ID, []string{archive.StateScheduled}, archive.StateRunning, "", s0.Add(90*time.Second+200*time.Millisecond), time.Time{}, s0)
			// Its lease was taken at +90 s and never renewed: the daemon died.
			if err := s.Reserve(ctx, tk.Reservations(runs[3].ID, s0.Add(90*time.Second))); err != nil {
				t.Fatal(err)
			}
			ids, err := s.AbortRunning(ctx, "a", "daemon restarted", s0.Add(200*time.Second))
			if err != nil || len(ids) != 1 || ids[0] != runs[3].ID {
				t.Fatalf("aborted %v %v", ids, err)
			}
			// Its end is its lease's (when another run could take its
			// hosts), not the daemon's return.
			if got, _ := s.GetSchedRun(ctx, runs[3].ID); !got.Ended.Equal(s0.Add(90*time.Second + schedule.LeaseTTL)) {
				t.Fatalf("aborted run ended %v, want its lease's end", got.Ended)
			}

			counts, err := s.StateCounts(ctx)
			want := map[string]int{archive.StateFinished: 1, archive.StateFailed: 1, archive.StateMissed: 1, archive.StateAborted: 1}
			if err != nil || fmt.Sprint(counts) != fmt.Sprint(want) {
				t.Fatalf("counts %v, want %v (%v)", counts, want, err)
			}
			last, err := s.LastResults(ctx)
			if err != nil || len(last) != 1 {
				t.Fatalf("last results %v %v", last, err)
			}
			p := last[0]
			if p.PairKey != (PairKey{"a", "b", "tput", string(schedule.Forward)}) || p.State != archive.StateAborted || p.Reason != "daemon restarted" ||
				!p.At.Equal(s0.Add(90*time.Second+schedule.LeaseTTL)) || !p.LastSuccess.Equal(start.Add(5*time.Second)) || p.GoodputBps != nil {
				t.Fatalf("last result %+v", p)
			}
			// Another pair whose last run finished carries its figures.
			tk2 := schedTask("tput", "b", "a")
			s.PutTask(ctx, tk2, s0)
			r2, _ := tk2.At(0)
			s.PlanRuns(ctx, []*SchedRun{NewSchedRun(tk2, r2)}, s0)
			s.Transition(ctx, r2.ID, []string{archive.StateScheduled}, archive.StateFinished, "", s0.Add(time.Second), s0.Add(6*time.Second), s0)
			rec2 := sampleRun(r2.ID, "", 0)
			rec2.Summary.RRp50us, rec2.Summary.RRp99us, rec2.Summary.LostPercent = f64(250), f64(1500), f64(0.5)
			if err := s.PutRun(ctx, rec2); err != nil {
				t.Fatal(err)
			}
			last, _ = s.LastResults(ctx)
			if len(last) != 2 || last[1].Source != "b" || *last[1].GoodputBps != 7.99e8 || *last[1].RTTp50ms != 0.25 ||
				*last[1].RTTp99ms != 1.5 || *last[1].LostPercent != 0.5 || last[1].State != archive.StateFinished {
				t.Fatalf("finished pair %+v", last)
			}

			lags, err := s.Lags(ctx, s0)
			if err != nil || len(lags) != 4 {
				t.Fatalf("lags %v %v", lags, err)
			}
			byID := map[string]time.Duration{}
			for _, l := range lags {
				byID[l.RunID] = l.Lag()
			}
			if byID[runs[0].ID] != 400*time.Millisecond || byID[runs[1].ID] != time.Second || byID[runs[3].ID] != 200*time.Millisecond || byID[r2.ID] != time.Second {
				t.Fatalf("lags %+v", lags)
			}
			got, err := s.SchedRuns(ctx, RunQuery{Source: "a", Dest: "b", Since: s0.Add(time.Second)})
			if err != nil || len(got) != 3 || got[0].Seq != 1 || got[0].Reason != "connection refused" {
				t.Fatalf("runs a→b since +1 s: %v %v", got, err)
			}
			got, _ = s.SchedRuns(ctx, RunQuery{Host: "a", States: []string{archive.StateFinished}})
			if len(got) != 2 {
				t.Fatalf("finished runs touching a: %d", len(got))
			}
		})
	}
}

func TestReservationsNeverOverlap(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			ab := schedTask("tput", "a", "b")
			cb := schedTask("tput", "c", "b")
			if err := s.Reserve(ctx, ab.Reservations("ab-0", s0)); err != nil {
				t.Fatal(err)
			}
			// c→b overlaps on b: refused, naming the holder and its end.
			err := s.Reserve(ctx, cb.Reservations("cb-0", s0.Add(5*time.Second)))
			var busy *schedule.Busy
			if !errors.As(err, &busy) || busy.RunID != "ab-0" || busy.Resource != "host:b" || !busy.Until.Equal(s0.Add(schedule.LeaseTTL)) {
				t.Fatalf("overlap: %v", err)
			}
			// Nothing of the refused run was kept (c's row neither).
			if rs, _ := s.Reservations(ctx, s0, s0.Add(time.Hour)); len(rs) != 2 {
				t.Fatalf("after a refusal: %v", rs)
			}
			if s.db.Postgres() {
				// The database itself refuses the overlap, whatever the caller checked.
				_, err := s.db.Exec(`INSERT INTO reservation (resource, lo, hi, run_id, class) VALUES ('host:b', $1, $2, 'raw', 'exclusive')`,
					s0.Add(time.Second), s0.Add(2*time.Second))
				if err == nil {
					t.Fatal("PostgreSQL let an overlapping exclusive reservation in")
				}
			}
			// Background overlaps anything, in one statement; taken again
			// (a run retried) it is the same rows, moved; a resource named
			// twice is one row.
			bg := schedTask("ping", "c", "b")
			bg.Class = schedule.Background
			if err := s.Reserve(ctx, bg.Reservations("bg-0", s0)); err != nil {
				t.Fatal(err)
			}
			if err := s.Reserve(ctx, bg.Reservations("bg-0", s0.Add(time.Second))); err != nil {
				t.Fatal(err)
			}
			twice := []schedule.Reservation{{Resource: "host:d", From: s0, To: s0.Add(time.Second), RunID: "bg-1", Class: schedule.Background},
				{Resource: "host:d", From: s0, To: s0.Add(2 * time.Second), RunID: "bg-1", Class: schedule.Background}}
			if err := s.Reserve(ctx, twice); err != nil {
				t.Fatalf("a resource named twice: %v", err)
			}
			rs, _ := s.Reservations(ctx, s0, s0.Add(time.Hour))
			n := map[string]int{}
			for _, r := range rs {
				n[r.RunID]++
				if r.RunID == "bg-0" && !r.From.Equal(s0.Add(time.Second)) {
					t.Errorf("bg-0 taken again from %v, want %v", r.From, s0.Add(time.Second))
				}
			}
			if n["bg-0"] != 2 || n["bg-1"] != 1 {
				t.Fatalf("background rows by run %v, want bg-0's 2 and bg-1's 1", n)
			}
			// Released early, the rest of the time is free.
			if err := s.Release(ctx, "ab-0", s0.Add(4*time.Second)); err != nil {
				t.Fatal(err)
			}
			if err := s.Reserve(ctx, cb.Reservations("cb-0", s0.Add(5*time.Second))); err != nil {
				t.Fatalf("after release: %v", err)
			}
		})
	}
}

// A reservation is a lease: renewed while its run's daemon lives, it
// holds; not renewed (the daemon was killed), it lapses LeaseTTL after
// its last renewal and no longer keeps another run from its hosts.
func TestReservationLeases(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			ab := schedTask("tput", "a", "b")
			cb := schedTask("tput", "c", "b")
			if err := s.Reserve(ctx, ab.Reservations("ab-0", s0)); err != nil {
				t.Fatal(err)
			}
			var busy *schedule.Busy
			if err := s.Reserve(ctx, cb.Reservations("cb-0", s0.Add(10*time.Second))); !errors.As(err, &busy) {
				t.Fatalf("inside the first lease: %v", err)
			}
			// Renewed at +10 s: it holds until +25 s.
			now := s0.Add(10 * time.Second)
			ok, err := s.RenewLease(ctx, "ab-0", now, schedule.LeaseEnd(s0, now, ab.Hold()))
			if err != nil || !ok {
				t.Fatalf("renewal: %v %v", ok, err)
			}
			if err := s.Reserve(ctx, cb.Reservations("cb-0", s0.Add(20*time.Second))); !errors.As(err, &busy) || !busy.Until.Equal(s0.Add(25*time.Second)) {
				t.Fatalf("inside the renewed lease: %v", err)
			}
			// Not renewed again: from +25 s the hosts are free.
			if err := s.Reserve(ctx, cb.Reservations("cb-0", s0.Add(25*time.Second))); err != nil {
				t.Fatalf("after the lease lapsed: %v", err)
			}
			// A lapsed lease is not taken back.
			now = s0.Add(30 * time.Second)
			if ok, err := s.RenewLease(ctx, "ab-0", now, schedule.LeaseEnd(s0, now, ab.Hold())); err != nil || ok {
				t.Fatalf("renewing a lapsed lease: %v %v", ok, err)
			}
			// A released one neither.
			if err := s.Release(ctx, "cb-0", s0.Add(27*time.Second)); err != nil {
				t.Fatal(err)
			}
			now = s0.Add(26 * time.Second)
			if ok, err := s.RenewLease(ctx, "cb-0", now, schedule.LeaseEnd(s0.Add(25*time.Second), now, cb.Hold())); err != nil || !ok {
				t.Fatalf("renewing a held lease: %v %v", ok, err)
			}
			if ok, _ := s.RenewLease(ctx, "cb-0", s0.Add(50*time.Second), s0.Add(65*time.Second)); ok {
				t.Fatal("renewed a lease that had ended")
			}
		})
	}
}

// Many goroutines reserve overlapping slots on one host at once; the
// database lets through no two that overlap.
func TestConcurrentReservations(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			var wg sync.WaitGroup
			for i := 0; i < 12; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					tk := schedTask("tput", fmt.Sprint("s", i), "hub")
					err := s.Reserve(ctx, tk.Reservations(fmt.Sprint("r", i), s0.Add(time.Duration(i)*20*time.Second)))
					var busy *schedule.Busy
					if err != nil && !errors.As(err, &busy) {
						t.Error(err)
					}
				}(i)
			}
			wg.Wait()
			rs, err := s.Reservations(ctx, s0, s0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			var hub []schedule.Reservation
			for _, r := range rs {
				if r.Resource == "host:hub" {
					hub = append(hub, r)
				}
			}
			if len(hub) == 0 {
				t.Fatal("no reservation succeeded")
			}
			for i := range hub {
				for j := range hub {
					if i != j && schedule.Conflicts(hub[i], hub[j]) {
						t.Fatalf("overlap: %+v and %+v", hub[i], hub[j])
					}
				}
			}
		})
	}
}

// The schedule's writes record the caller's clock, not the machine's:
// a daemon with a replaced clock leaves times it chose.
func TestScheduleWritesRecordTheCallersClock(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			at := func(n int) time.Time { return s0.Add(time.Duration(n) * time.Hour) }
			taskTimes := func(id string) (created, updated time.Time) {
				t.Helper()
				if err := s.db.QueryRowContext(ctx, s.q(`SELECT created, updated FROM sched_task WHERE id = ?`), id).Scan(&created, &updated); err != nil {
					t.Fatal(err)
				}
				return created.UTC(), updated.UTC()
			}
			runUpdated := func(id string) time.Time {
				t.Helper()
				var u time.Time
				if err := s.db.QueryRowContext(ctx, s.q(`SELECT updated FROM sched_run WHERE id = ?`), id).Scan(&u); err != nil {
					t.Fatal(err)
				}
				return u.UTC()
			}
			tk := schedTask("tput", "a", "b")
			if _, err := s.PutTask(ctx, tk, at(1)); err != nil {
				t.Fatal(err)
			}
			if c, u := taskTimes(tk.ID); !c.Equal(at(1)) || !u.Equal(at(1)) {
				t.Fatalf("stored task: created %v updated %v, want both %v", c, u, at(1))
			}
			changed := *tk
			changed.Repeat = time.Minute
			if _, err := s.ApplyTasks(ctx, "m.yaml", []*schedule.Task{&changed}, at(2)); err != nil {
				t.Fatal(err)
			}
			if c, u := taskTimes(tk.ID); !c.Equal(at(1)) || !u.Equal(at(2)) {
				t.Fatalf("updated task: created %v updated %v, want %v and %v", c, u, at(1), at(2))
			}
			// The task read back was added when first stored: its max_runs
			// counts from there (schedule.Task.Added), an update or not.
			if got, err := s.GetTask(ctx, tk.ID); err != nil || !got.Added.Equal(at(1)) {
				t.Fatalf("task read back: added %v (%v), want %v", got.Added, err, at(1))
			}
			if err := s.SetPaused(ctx, tk.ID, true, at(3)); err != nil {
				t.Fatal(err)
			}
			if _, u := taskTimes(tk.ID); !u.Equal(at(3)) {
				t.Fatalf("paused task updated %v, want %v", u, at(3))
			}
			r0, _ := changed.At(0)
			if _, err := s.PlanRuns(ctx, []*SchedRun{NewSchedRun(&changed, r0)}, at(4)); err != nil {
				t.Fatal(err)
			}
			if u := runUpdated(r0.ID); !u.Equal(at(4)) {
				t.Fatalf("planned run updated %v, want %v", u, at(4))
			}
			if ok, err := s.Transition(ctx, r0.ID, []string{archive.StateScheduled}, archive.StateMissed, "test", time.Time{}, time.Time{}, at(5)); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if u := runUpdated(r0.ID); !u.Equal(at(5)) {
				t.Fatalf("moved run updated %v, want %v", u, at(5))
			}
		})
	}
}

// LastResultsFrom is LastResults for one source's pairs, and on SQLite
// reads sched_run through its pair index only (no scan of the table:
// the cost of a daemon's /metrics must not grow with the mesh).
func TestLastResultsFrom(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tasks := []*schedule.Task{schedTask("tput", "a", "b"), schedTask("tput", "a", "c"), schedTask("tput", "b", "a")}
			if _, err := s.ApplyTasks(ctx, "m.yaml", tasks, s0); err != nil {
				t.Fatal(err)
			}
			for ti, tk := range tasks {
				var runs []*SchedRun
				for seq := range 3 {
					r, _ := tk.At(seq)
					runs = append(runs, NewSchedRun(tk, r))
				}
				if _, err := s.PlanRuns(ctx, runs, s0); err != nil {
					t.Fatal(err)
				}
				for seq, r := range runs[:2] {
					state := archive.StateFinished
					if ti == 0 && seq == 1 {
						state = archive.StateFailed // a→b's last run failed: its last success is the one before
					}
					begin := r.Planned.Add(time.Second)
					if _, err := s.Transition(ctx, r.ID, []string{archive.StateScheduled}, state, "", begin, begin.Add(5*time.Second), s0); err != nil {
						t.Fatal(err)
					}
				}
			}
			all, err := s.LastResults(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var want []PairStatus
			for _, p := range all {
				if p.Source == "a" {
					want = append(want, p)
				}
			}
			got, err := s.LastResultsFrom(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 2 || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				t.Fatalf("from a:\n%+v\nwant\n%+v", got, want)
			}
			if got[0].State != archive.StateFailed || got[0].LastSuccess.IsZero() || !got[0].LastSuccess.Before(got[0].At) {
				t.Errorf("a→b: %+v; want its failed run and the success before it", got[0])
			}
			if none, err := s.LastResultsFrom(ctx, "c"); err != nil || len(none) != 0 {
				t.Errorf("from c (no tasks): %v %v", none, err)
			}
			if s.db.Postgres() {
				return
			}
			rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+s.lastResultsFromQuery(), lastResultsArgs("a")...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			for _, step := range plan {
				if strings.HasPrefix(step, "SCAN") && !strings.Contains(step, "USING") && !strings.HasPrefix(step, "SCAN k") {
					t.Errorf("the query scans a table: %q in\n%s", step, strings.Join(plan, "\n"))
				}
			}
			t.Logf("plan:\n%s", strings.Join(plan, "\n"))
		})
	}
}

// Runs a→b and b→a reserve both hosts at the same instant, many times:
// each pair ends with one of them holding both and the other told it is
// busy, never with an error. Taken in the task's order (source first),
// the two transactions each inserted their first host and waited for
// the other's: PostgreSQL broke the deadlock by failing one of them,
// whose run was then left scheduled with no reason (a CI mesh lab's h1
// run, "not taken before its deadline").
func TestCrossedReservationsAreBusyNotDeadlocked(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			ab, ba := schedTask("tput", "a", "b"), schedTask("tput", "b", "a")
			const pairs = 40
			for i := 0; i < pairs; i++ {
				from := s0.Add(time.Duration(i) * time.Minute)
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for j, tk := range []*schedule.Task{ab, ba} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[j] = s.Reserve(ctx, tk.Reservations(fmt.Sprintf("%s-%d", tk.Source, i), from))
					}()
				}
				wg.Wait()
				held := 0
				for _, err := range errs {
					var busy *schedule.Busy
					switch {
					case err == nil:
						held++
					case !errors.As(err, &busy):
						t.Fatalf("pair %d: %v, want the run told its host is busy", i, err)
					}
				}
				if held != 1 {
					t.Fatalf("pair %d: %d of the two crossed runs hold their hosts (%v), want 1", i, held, errs)
				}
			}
		})
	}
}
