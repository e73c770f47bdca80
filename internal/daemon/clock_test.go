package daemon_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

// fakeClock is a daemon clock that moves only when the test sets it.
// It reports each sleep and each ticker as it begins, so that a test
// waits for the daemon to reach them instead of guessing how long that
// takes.
type fakeClock struct {
	mu       sync.Mutex
	now      time.Time
	sleepers []fakeSleeper
	tickers  []*fakeTicker
	// asleep receives the instant of each SleepUntil that waits;
	// ticking receives the period of each ticker started.
	asleep  chan time.Time
	ticking chan time.Duration
	// nows, when set, receives what each Now returns.
	nows chan time.Time
}

type fakeSleeper struct {
	until time.Time
	wake  chan struct{}
}

type fakeTicker struct {
	every   time.Duration
	next    time.Time
	c       chan time.Time
	stopped bool
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, asleep: make(chan time.Time, 64), ticking: make(chan time.Duration, 64)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	now, nows := c.now, c.nows
	c.mu.Unlock()
	if nows != nil {
		select {
		case nows <- now:
		default:
		}
	}
	return now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if !t.After(c.now) {
		c.mu.Unlock()
		return ctx.Err()
	}
	s := fakeSleeper{until: t, wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.mu.Unlock()
	select {
	case c.asleep <- t:
	default:
	}
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *fakeClock) Every(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	tk := &fakeTicker{every: d, next: c.now.Add(d), c: make(chan time.Time, 1)}
	c.tickers = append(c.tickers, tk)
	c.mu.Unlock()
	select {
	case c.ticking <- d:
	default:
	}
	return tk.c, func() {
		c.mu.Lock()
		tk.stopped = true
		c.mu.Unlock()
	}
}

// set moves the clock to now: the sleepers whose instant came wake, and
// the tickers whose tick came tick (once, like a time.Ticker whose
// reader was late).
func (c *fakeClock) set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	kept := c.sleepers[:0]
	for _, s := range c.sleepers {
		if s.until.After(now) {
			kept = append(kept, s)
			continue
		}
		close(s.wake)
	}
	c.sleepers = kept
	for _, tk := range c.tickers {
		for !tk.stopped && !tk.next.After(now) {
			select {
			case tk.c <- tk.next:
			default:
			}
			tk.next = tk.next.Add(tk.every)
		}
	}
}

// within fails the test when ch yields nothing within limit: the daemon
// never reached the event.
func within[T any](t *testing.T, ch <-chan T, limit time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatalf("%s: nothing after %v", what, limit)
		var zero T
		return zero
	}
}

// waitState waits (a bounded poll of the archive) until run id is in
// state want.
func waitState(t *testing.T, st *archive.Store, id, want string) *taskstore.SchedRun {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := taskstore.New(st).GetSchedRun(context.Background(), id)
		if err == nil && r.State == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never %s: %+v %v", id, want, r, err)
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: the archive, until the deadline above
	}
}

// The instant of the fake clock's runs: any fixed time will do; the
// daemon never looks at the machine's clock to decide.
var fakeT = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fakeClockDaemon is a daemon on a fake clock set 30 s before fakeT,
// with one task a→a whose single run is planned at fakeT with a 4 s
// slip, and that run planned.
func fakeClockDaemon(t *testing.T, secs int) (*daemon.Daemon, *fakeClock, schedule.Run) {
	t.Helper()
	return fakeClockDaemonOn(t, archivetest.Backends(t)["sqlite"], secs)
}

// fakeClockDaemonOn is fakeClockDaemon on the archive dsn.
func fakeClockDaemonOn(t *testing.T, dsn string, secs int) (*daemon.Daemon, *fakeClock, schedule.Run) {
	t.Helper()
	clk := newFakeClock(fakeT.Add(-30 * time.Second))
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) { c.Clock = clk })
	t.Cleanup(func() {
		d.CloseQueue()
		d.Store().Close()
	})
	// The daemon does not Run (the test drives its worker), so the test
	// server it would serve is served here.
	srv := loopserver.Start(t)
	tk := loopTask("tput", "a", "a", srv.Addr().Port, secs, 0, 4*time.Second, 1)
	tk.Start = fakeT
	ctx := context.Background()
	if _, err := d.Schedule().PutTask(ctx, tk, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := d.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ := tk.At(0)
	got, err := d.Schedule().GetSchedRun(ctx, r.ID)
	if err != nil || got.State != archive.StateScheduled || !got.Planned.Equal(fakeT) || !got.Deadline.Equal(fakeT.Add(4*time.Second)) {
		t.Fatalf("planned on the fake clock: %+v %v", got, err)
	}
	return d, clk, r
}

// execute runs the run as a worker would, in the background.
func execute(ctx context.Context, d *daemon.Daemon, id string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- d.Execute(ctx, id) }()
	return done
}

// A run planned at T waits on the daemon's clock for exactly T, is not
// started while it waits, and starts at T (no lag) when the clock gets
// there.
func TestRunStartsAtItsInstantOnTheDaemonsClock(t *testing.T) {
	t.Parallel()
	d, clk, r := fakeClockDaemon(t, 1)
	sched := d.Schedule()
	done := execute(context.Background(), d, r.ID)
	if until := within(t, clk.asleep, 10*time.Second, "the worker's sleep"); !until.Equal(fakeT) {
		t.Fatalf("the worker sleeps until %v, want the run's instant %v", until, fakeT)
	}
	clk.set(fakeT.Add(-time.Millisecond))
	if got, _ := sched.GetSchedRun(context.Background(), r.ID); got.State != archive.StateScheduled || !got.ActualStart.IsZero() {
		t.Fatalf("a millisecond before its instant: %+v", got)
	}
	clk.set(fakeT)
	if err := within(t, done, 60*time.Second, "the run's end"); err != nil {
		t.Fatal(err)
	}
	got, err := sched.GetSchedRun(context.Background(), r.ID)
	if err != nil || got.State != archive.StateFinished || !got.ActualStart.Equal(fakeT) || !got.Ended.Equal(fakeT) {
		t.Fatalf("the run: %+v %v (want finished, started and ended at %v on the fake clock)", got, err, fakeT)
	}
	if lag, ok := got.Lag(); !ok || lag != 0 {
		t.Fatalf("lag %v %v, want 0", lag, ok)
	}
}

// A worker that wakes past the run's deadline records it missed, with
// how late it was picked up, and never starts it.
func TestRunPickedUpPastItsSlipIsMissed(t *testing.T) {
	d, clk, r := fakeClockDaemon(t, 1)
	done := execute(context.Background(), d, r.ID)
	within(t, clk.asleep, 10*time.Second, "the worker's sleep")
	clk.set(r.Deadline.Add(time.Millisecond))
	if err := within(t, done, 30*time.Second, "the worker's return"); err != nil {
		t.Fatal(err)
	}
	got, err := d.Schedule().GetSchedRun(context.Background(), r.ID)
	if err != nil || got.State != archive.StateMissed || !got.ActualStart.IsZero() ||
		got.Reason != "picked up 4.001s after its planned start, past its slip" {
		t.Fatalf("the late run: %+v %v", got, err)
	}
}

// A planned run nobody took is recorded missed by the planner only once
// the daemon's clock is NotTakenGrace past its deadline, not a
// millisecond before.
func TestRunNotTakenIsMissedAfterItsWindow(t *testing.T) {
	d, clk, r := fakeClockDaemon(t, 1)
	sched := d.Schedule()
	ctx := context.Background()
	clk.set(r.Deadline.Add(daemon.NotTakenGrace))
	if err := d.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := sched.GetSchedRun(ctx, r.ID); got.State != archive.StateScheduled {
		t.Fatalf("at the end of its window: %+v", got)
	}
	clk.set(r.Deadline.Add(daemon.NotTakenGrace + time.Millisecond))
	if err := d.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := sched.GetSchedRun(ctx, r.ID)
	if err != nil || got.State != archive.StateMissed || !strings.HasPrefix(got.Reason, "not taken before its deadline") {
		t.Fatalf("past its window: %+v %v", got, err)
	}
}

// While its test runs, a run's lease is renewed on the daemon's ticks,
// to LeaseTTL past the daemon's now.
func TestLeaseRenewedOnTheDaemonsTicks(t *testing.T) {
	d, clk, r := fakeClockDaemon(t, 30)
	sched := d.Schedule()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := execute(ctx, d, r.ID)
	within(t, clk.asleep, 10*time.Second, "the worker's sleep")
	clk.set(fakeT)
	for {
		if every := within(t, clk.ticking, 30*time.Second, "the heartbeat's ticker"); every == schedule.LeaseRenew {
			break
		}
	}
	leaseEnd := func() time.Time {
		rs, err := sched.Reservations(context.Background(), fakeT, fakeT.Add(time.Hour))
		if err != nil || len(rs) == 0 {
			t.Fatalf("reservations %v %v", rs, err)
		}
		return rs[0].To
	}
	if end := leaseEnd(); !end.Equal(fakeT.Add(schedule.LeaseTTL)) {
		t.Fatalf("first lease ends %v, want %v", end, fakeT.Add(schedule.LeaseTTL))
	}
	renewedAt := fakeT.Add(schedule.LeaseRenew)
	clk.set(renewedAt)
	want := renewedAt.Add(schedule.LeaseTTL)
	deadline := time.Now().Add(30 * time.Second)
	for !leaseEnd().Equal(want) {
		if time.Now().After(deadline) {
			t.Fatalf("lease ends %v after the tick at %v, want %v", leaseEnd(), renewedAt, want)
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: the archive, until the deadline above
	}
	stop()
	if err := within(t, done, 60*time.Second, "the stopped run's end"); err != nil {
		t.Fatal(err)
	}
	if got, _ := sched.GetSchedRun(context.Background(), r.ID); got.State != archive.StateAborted || !got.ActualStart.Equal(fakeT) {
		t.Fatalf("the stopped run: %+v", got)
	}
}
