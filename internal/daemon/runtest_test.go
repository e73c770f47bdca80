package daemon_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// A daemon whose Config.RunTest runs the tests stores that function's
// document as the run's report, and its error as the run's failure.
func TestRunTestPortRunsTheTests(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	ctx := context.Background()
	const doc = `{"start":{"test_start":{"protocol":"TCP","num_streams":1,"duration":1}},
		"end":{"sum_sent":{"seconds":1,"bytes":15375000,"bits_per_second":123000000},"sum_received":{"seconds":1,"bytes":15375000,"bits_per_second":123000000}}}`
	var ran []string
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) {
		c.Binary = "/nonexistent/wireperf" // the child process must not be what runs
		c.RunTest = func(ctx context.Context, tk *schedule.Task) ([]byte, error) {
			ran = append(ran, tk.Name)
			if tk.Name == "broken" {
				return nil, errors.New("the virtual test broke")
			}
			return []byte(doc), nil
		}
	})
	defer d.CloseQueue()
	defer d.Store().Close()
	good := loopTask("tput", "a", "b", 5201, 1, 0, 5*time.Second, 1)
	bad := loopTask("broken", "a", "c", 5201, 1, 0, 5*time.Second, 1)
	good.Start, bad.Start = time.Now(), time.Now()
	for _, tk := range []*schedule.Task{good, bad} {
		if _, err := d.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tk := range []*schedule.Task{good, bad} {
		if err := d.Execute(ctx, schedule.RunID(tk.ID, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if len(ran) != 2 {
		t.Fatalf("RunTest ran %v, want both tests", ran)
	}
	rec, err := d.Store().Get(ctx, schedule.RunID(good.ID, 0))
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != archive.StateFinished || rec.Summary.ReceivedBps == nil || *rec.Summary.ReceivedBps != 123e6 {
		t.Errorf("the good run: state %s, goodput %v; want finished at 123 Mb/s", rec.State, rec.Summary.ReceivedBps)
	}
	if want := "wireperf client --time=1 --port=5201 --json -- 127.0.0.1"; rec.Cmdline != want {
		t.Errorf("command line %q, want %q", rec.Cmdline, want)
	}
	r, err := d.Schedule().GetSchedRun(ctx, schedule.RunID(bad.ID, 0))
	if err != nil {
		t.Fatal(err)
	}
	if r.State != archive.StateFailed || r.Reason == "" {
		t.Errorf("the broken run: %s (%q), want failed with its reason", r.State, r.Reason)
	}
}

// A scheduled run through a lab records the lab's check as client does:
// the test's document carries the warning that its router fell behind,
// and the run's reason, which the grid and the API show, says it too.
func TestRunKeepsTheLabsWarning(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	ctx := context.Background()
	const warning = `the lab "w"'s router fell behind: its output stood idle 90 ms of the test's 1.0 s (9.0%) while packets were due, and 12 packets left more than 1 ms late: the lab, not the path it emulates, limited this test`
	doc := `{"start":{"test_start":{"protocol":"TCP","num_streams":1,"duration":1}},
		"end":{"sum_sent":{"seconds":1,"bytes":15375000,"bits_per_second":123000000},"sum_received":{"seconds":1,"bytes":15375000,"bits_per_second":123000000}},
		"wireperf":{"result":{"warnings":[` + strconv.Quote(warning) + `]}}}`
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) {
		c.Binary = "/nonexistent/wireperf"
		c.RunTest = func(context.Context, *schedule.Task) ([]byte, error) { return []byte(doc), nil }
	})
	defer d.CloseQueue()
	defer d.Store().Close()
	tk := loopTask("tput", "a", "b", 5201, 1, 0, 5*time.Second, 1)
	id, r := runFirst(t, ctx, d, tk)
	if r.State != archive.StateFinished || r.Reason != warning {
		t.Errorf("the run: %s (%q), want finished with the lab's warning as its reason", r.State, r.Reason)
	}
	rec, err := d.Store().Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec.Document), "fell behind") {
		t.Error("the stored document lost the warning")
	}
}

// runFirst stores tk to start now, plans, runs its first run through the
// daemon's worker and returns the run's ID and its row in the schedule.
func runFirst(t *testing.T, ctx context.Context, d *daemon.Daemon, tk *schedule.Task) (string, *taskstore.SchedRun) {
	t.Helper()
	tk.Start = time.Now()
	if _, err := d.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := d.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	id := schedule.RunID(tk.ID, 0)
	if err := d.Execute(ctx, id); err != nil {
		t.Fatal(err)
	}
	r, err := d.Schedule().GetSchedRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return id, r
}
