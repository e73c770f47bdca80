package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/schedule"
)

// A test whose lease was not renewed in time is stopped before the lease
// can lapse (another run could take its hosts then), and recorded
// aborted, saying why. The heartbeat here first runs 20 s into the run,
// past the 15 s lease it took: a daemon that stalled.
func TestTestStoppedWhenItsLeaseCouldLapse(t *testing.T) {
	d, clk, r := fakeClockDaemon(t, 30)
	sched := d.Schedule()
	done := execute(context.Background(), d, r.ID)
	within(t, clk.asleep, 10*time.Second, "the worker's sleep")
	clk.set(fakeT)
	for {
		if every := within(t, clk.ticking, 30*time.Second, "the heartbeat's ticker"); every == schedule.LeaseRenew {
			break
		}
	}
	clk.set(fakeT.Add(schedule.LeaseTTL + schedule.LeaseRenew))
	if err := within(t, done, 60*time.Second, "the stopped run's end"); err != nil {
		t.Fatal(err)
	}
	got, err := sched.GetSchedRun(context.Background(), r.ID)
	if err != nil || got.State != archive.StateAborted || !strings.Contains(got.Reason, "lease") {
		t.Fatalf("the run whose lease could lapse: %+v %v, want aborted for its lease", got, err)
	}
	// Its test was stopped (a 30 s test ended long before 30 s of the
	// machine's time), and its hosts are free again.
	if rs, err := sched.Reservations(context.Background(), fakeT, fakeT.Add(time.Hour)); err != nil {
		t.Fatal(err)
	} else {
		for _, res := range rs {
			if res.To.After(got.Ended) {
				t.Errorf("reservation %+v still held past the run's end %v", res, got.Ended)
			}
		}
	}
}

// A run whose start the archive held up until its first lease had
// lapsed is not begun: its test would run on hosts another run may hold
// by then, with no renewal until the heartbeat's first tick. A
// clean-clone CI run's record fits it: a 5 s test recorded over 19.7 s
// and never renewed, another run taking one of its hosts after its
// first lease's end. Here an SQLite writer holds the archive while the
// daemon's clock moves past the lease.
func TestRunNotBegunOnALeaseThatLapsedAsItStarted(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	d, clk, r := fakeClockDaemonOn(t, dsn, 30)
	sched := d.Schedule()
	ctx := context.Background()
	other, err := archive.OpenSQLitePool(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	done := execute(ctx, d, r.ID)
	within(t, clk.asleep, 10*time.Second, "the worker's sleep")
	hold, err := other.BeginTx(ctx, nil) // _txlock=immediate: the archive's write lock
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	nows := make(chan time.Time, 64)
	clk.mu.Lock()
	clk.nows = nows
	clk.mu.Unlock()
	clk.set(fakeT)
	// The worker has read the clock for its start: it reserves from
	// that instant, and waits for the archive's lock to do it.
	if at := within(t, nows, 10*time.Second, "the worker's start"); !at.Equal(fakeT) {
		t.Fatalf("the worker read %v, want %v", at, fakeT)
	}
	clk.set(fakeT.Add(schedule.LeaseTTL + time.Second))
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := within(t, done, 60*time.Second, "the run's end"); err != nil {
		t.Fatal(err)
	}
	got, err := sched.GetSchedRun(ctx, r.ID)
	if err != nil || got.State != archive.StateAborted || !strings.Contains(got.Reason, "not begun") {
		t.Fatalf("the run whose lease lapsed as it started: %+v %v, want aborted, not begun", got, err)
	}
	run, err := d.Store().Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Document) > 0 {
		t.Errorf("the run's test ran: its document is %d bytes", len(run.Document))
	}
	rs, err := sched.Reservations(ctx, fakeT, fakeT.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rs {
		if res.To.After(got.Ended) {
			t.Errorf("reservation %+v held past the run's end %v", res, got.Ended)
		}
	}
}
