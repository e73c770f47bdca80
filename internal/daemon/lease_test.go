package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
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
