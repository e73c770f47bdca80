package daemon_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/cli"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/taskstore"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// envCLI makes this test binary act as wireperf, so that the daemon's
// worker runs its tests through the real command line.
const envCLI = "WIREPERF_DAEMON_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(envCLI) == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	// The parallel tests here spend their time waiting for the schedule's
	// instants in real time, not on the CPU: unless -parallel says
	// otherwise, let them all wait at once rather than GOMAXPROCS at a
	// time.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", "16")
	}
	goleak.VerifyTestMain(m)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newDaemon(t *testing.T, host, dsn string, withServer bool, mut func(*daemon.Config)) *daemon.Daemon {
	t.Helper()
	cfg := daemon.Config{Host: host, DSN: dsn, Env: []string{envCLI + "=1"}, Logger: quiet(), SpoolDir: t.TempDir(),
		Grace: 5 * time.Second, PlanEvery: time.Second, Horizon: time.Minute}
	if withServer {
		cfg.Server = &server.Config{Bind: "127.0.0.1", Limits: server.DefaultLimits(), ShutdownGrace: time.Second, Logger: quiet()}
	}
	if mut != nil {
		mut(&cfg)
	}
	d, err := daemon.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// start runs d until the test ends (or stop is called).
func start(t *testing.T, d *daemon.Daemon) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func loopTask(name, src, dst string, port int, secs int, repeat, slip time.Duration, runs int) *schedule.Task {
	args := []string{"client", "-t", fmt.Sprint(secs)}
	return &schedule.Task{ID: schedule.DefineID("test", name, src, dst), Name: name, Source: src, Dest: dst,
		DestAddr: fmt.Sprintf("127.0.0.1:%d", port), Args: args, Class: schedule.Exclusive,
		Duration: time.Duration(secs)*time.Second + 2*time.Second,
		Start:    time.Now().Truncate(time.Second).Add(5 * time.Second), Repeat: repeat, Slip: slip, MaxRuns: runs, Origin: "test"}
}

// waitDone waits until every run of the tasks has ended (bounded).
func waitDone(t *testing.T, st *archive.Store, want int, limit time.Duration) []*taskstore.SchedRun {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		runs, err := taskstore.New(st).SchedRuns(context.Background(), taskstore.RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, r := range runs {
			switch r.State {
			case archive.StateScheduled, archive.StateRunning:
			default:
				done++
			}
		}
		if done >= want {
			return runs
		}
		if time.Now().After(deadline) {
			for _, r := range runs {
				t.Logf("%s %s %s", r.ID, r.State, r.Reason)
			}
			t.Fatalf("%d of %d runs ended after %v", done, want, limit)
		}
		time.Sleep(200 * time.Millisecond) // bounded poll: the archive, until the deadline above
	}
}

func TestOneHostRunsItsSchedule(t *testing.T) {
	t.Parallel()
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, true, nil)
	tk := loopTask("tput", "a", "a", d.ServerPort(), 1, 5*time.Second, 4*time.Second, 3)
	if _, err := d.Schedule().PutTask(context.Background(), tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	stop := start(t, d)
	st, err := archive.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := waitDone(t, st, 3, 60*time.Second)
	last, err := taskstore.New(st).LastResults(context.Background())
	if err != nil || len(last) != 1 || last[0].GoodputBps == nil || last[0].LastSuccess.IsZero() {
		t.Fatalf("last results %+v %v", last, err)
	}
	checkMetrics(t, d, last, 3)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	for _, r := range runs {
		if r.State != archive.StateFinished {
			t.Fatalf("run %s: %s (%s)", r.ID, r.State, r.Reason)
		}
		lag, _ := r.Lag()
		if lag < 0 {
			t.Fatalf("run %s started %v before its instant", r.ID, -lag)
		}
		rec, err := st.Get(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.State != archive.StateFinished || rec.DocumentFormat != archive.FormatJSON || rec.Summary.ReceivedBps == nil || *rec.Summary.ReceivedBps <= 0 {
			t.Fatalf("archived run %+v", rec)
		}
		if !strings.HasPrefix(rec.Cmdline, "wireperf client --time=1 --port=") || !strings.HasSuffix(rec.Cmdline, " --json -- 127.0.0.1") {
			t.Fatalf("command line %q", rec.Cmdline)
		}
	}
}

// Two daemons share one PostgreSQL; each runs 1 s tests to the other at
// the same instants. Every run ends finished or with a reason, and no two
// exclusive runs that share a host overlap.
func TestTwoDaemonsNeverOverlap(t *testing.T) {
	t.Parallel()
	dsn, ok := archivetest.Backends(t)["postgres"]
	if !ok {
		t.Skip(archivetest.EnvPG + " not set: two daemons need a shared PostgreSQL")
	}
	a := newDaemon(t, "a", dsn, true, nil)
	b := newDaemon(t, "b", dsn, true, nil)
	ctx := context.Background()
	const runs = 3
	for _, tk := range []*schedule.Task{
		loopTask("tput", "a", "b", b.ServerPort(), 1, 5*time.Second, 4*time.Second, runs),
		loopTask("tput", "b", "a", a.ServerPort(), 1, 5*time.Second, 4*time.Second, runs),
	} {
		if _, err := a.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stopA, stopB := start(t, a), start(t, b)
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all := waitDone(t, st, 2*runs, 90*time.Second)
	if last, err := taskstore.New(st).LastResults(ctx); err != nil {
		t.Fatal(err)
	} else {
		var ok []taskstore.PairStatus
		for _, p := range last {
			if p.State == archive.StateFinished {
				ok = append(ok, p)
			}
		}
		checkGrid(t, a, ok)
		checkGrid(t, b, ok) // one archive: every daemon shows the same grid
		checkGridInChromium(t, a, ok)
	}
	if err := errors.Join(stopA(), stopB()); err != nil {
		t.Fatal(err)
	}
	finished := 0
	for _, r := range all {
		switch r.State {
		case archive.StateFinished:
			finished++
		case archive.StateFailed, archive.StateMissed, archive.StateAborted:
			if r.Reason == "" {
				t.Fatalf("run %s %s without a reason", r.ID, r.State)
			}
		default:
			t.Fatalf("run %s left %s", r.ID, r.State)
		}
		t.Logf("%s %s→%s %s lag %v %s", r.ID, r.Source, r.Dest, r.State, r.ActualStart.Sub(r.Planned), r.Reason)
	}
	if finished == 0 {
		t.Fatal("no run finished")
	}
	if n := daemon.Overlaps(all); len(n) > 0 {
		t.Fatalf("exclusive runs overlap: %v", n)
	}
}

func TestAPIToken(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	var logs syncbuf.Buffer
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) {
		c.Token = "0123456789abcdef0123"
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	defer start(t, d)() // Run closes the archive at its end
	srv := httptest.NewServer(d.Mux())
	defer srv.Close()
	body := `{"name":"tput","source":"a","dest":"b","test":"client -t 5","repeat":"1m"}`
	do := func(method, path, token, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do("POST", "/api/tasks", "", body); code != http.StatusUnauthorized {
		t.Fatalf("write without a token: %d", code)
	}
	if code, _ := do("POST", "/api/tasks", "wrong-token-wrong-token", body); code != http.StatusUnauthorized {
		t.Fatalf("write with a wrong token: %d", code)
	}
	logged := logs.String()
	if !strings.Contains(logged, "API request refused") || !strings.Contains(logged, "/api/tasks") {
		t.Fatalf("the refusal was not logged: %q", logged)
	}
	if code, out := do("POST", "/api/tasks", "0123456789abcdef0123", body); code != http.StatusCreated || !strings.Contains(out, `"repeat": "1m0s"`) {
		t.Fatalf("write with the token: %d %s", code, out)
	}
	if code, out := do("GET", "/api/tasks", "", ""); code != http.StatusOK || !strings.Contains(out, `"test": "client -t 5"`) {
		t.Fatalf("open read: %d %s", code, out)
	}
	if code, out := do("GET", "/api/schedule?host=a&next=3m", "", ""); code != http.StatusOK || strings.Count(out, `"state": "scheduled"`) != 3 {
		t.Fatalf("schedule: %d %s", code, out)
	}
	if code, _ := do("GET", "/api/runs?since=yesterday", "", ""); code != http.StatusBadRequest {
		t.Fatalf("bad since: %d", code)
	}
	if code, out := do("POST", "/api/tasks", "0123456789abcdef0123", `{"name":"x","source":"a","dest":"b","test":"client","slip":"soon"}`); code != http.StatusBadRequest || !strings.Contains(out, "slip") {
		t.Fatalf("bad task: %d %s", code, out)
	}
	if code, _ := do("POST", "/api/schedule", "0123456789abcdef0123", "hosts: {a: , b: }\ngroups: {g: {mesh: [a, zz]}}\n"); code != http.StatusBadRequest {
		t.Fatalf("bad mesh: %d", code)
	}
	// 2 hosts running 10 s tests (12 s held) both ways every 20 s: 120%.
	overfull := "hosts: {a: , b: }\ngroups: {g: {mesh: [a, b]}}\ntests: {t: {test: client -t 10}}\nschedules:\n  - {group: g, test: t, repeat: 20s}\n"
	if code, out := do("POST", "/api/schedule", "0123456789abcdef0123", overfull); code != http.StatusBadRequest || !strings.Contains(out, "host a would be busy 120.0% of the time") {
		t.Fatalf("overfull mesh: %d %s", code, out)
	}
	if code, _ := do("DELETE", "/api/tasks/nope", "0123456789abcdef0123", ""); code != http.StatusNotFound {
		t.Fatalf("delete unknown: %d", code)
	}
}

func TestReadsNeedTokenWhenConfigured(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) { c.Token = "0123456789abcdef0123"; c.ReadsNeedToken = true })
	defer start(t, d)()
	srv := httptest.NewServer(d.Mux())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("read without a token: %d", resp.StatusCode)
	}
}

// SIGTERM during a test longer than the grace period: the test is
// stopped and its run recorded aborted, in the schedule and the archive.
func TestStopPastGraceRecordsAborted(t *testing.T) {
	t.Parallel()
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, true, func(c *daemon.Config) { c.Grace = 500 * time.Millisecond })
	tk := loopTask("long", "a", "a", d.ServerPort(), 30, 0, 4*time.Second, 1)
	if _, err := d.Schedule().PutTask(context.Background(), tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	st, err := archive.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	stop := start(t, d)
	id := schedule.RunID(tk.ID, 0)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := sched.GetSchedRun(context.Background(), id)
		if err == nil && r.State == archive.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never started: %+v %v", r, err)
		}
		time.Sleep(100 * time.Millisecond) // bounded poll: the archive, until the deadline above
	}
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Fatalf("stopping took %v: the 30 s test was not stopped", took)
	}
	r, err := sched.GetSchedRun(context.Background(), id)
	if err != nil || r.State != archive.StateAborted || !strings.Contains(r.Reason, "grace") || r.Ended.IsZero() {
		t.Fatalf("after SIGTERM: %+v %v", r, err)
	}
	rec, err := st.Get(context.Background(), id)
	if err != nil || rec.State != archive.StateAborted {
		t.Fatalf("archived run: %+v %v", rec, err)
	}
}

// A daemon killed mid-run comes back: the run it left running is
// recorded aborted, a run whose deadline passed while it was away is
// recorded missed, and a run still to come is taken.
func TestRestartAfterKill(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	ctx := context.Background()
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	now := time.Now()
	// The daemon's server port is only known once it runs; the task is
	// updated with it below, which keeps its planned runs' IDs.
	tk := loopTask("tput", "a", "a", 1, 1, 10*time.Second, 2*time.Second, 0)
	tk.Start = now.Truncate(time.Second).Add(-15 * time.Second) // runs at -15 s, -5 s, +5 s
	if _, err := sched.PutTask(ctx, tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	r0, _ := tk.At(0) // was running when the daemon died
	r1, _ := tk.At(1) // its time came and went
	if _, err := sched.PlanRuns(ctx, []*taskstore.SchedRun{taskstore.NewSchedRun(tk, r0), taskstore.NewSchedRun(tk, r1)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	sched.Transition(ctx, r0.ID, []string{archive.StateScheduled}, archive.StateRunning, "", r0.Planned, time.Time{}, r0.Planned)

	d := newDaemon(t, "a", dsn, true, nil)
	tk.DestAddr = fmt.Sprintf("127.0.0.1:%d", d.ServerPort())
	if _, err := sched.PutTask(ctx, tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ := sched.GetSchedRun(ctx, r0.ID)
	if got.State != archive.StateAborted || !strings.Contains(got.Reason, "daemon stopped") {
		t.Fatalf("the run left running: %+v", got)
	}
	stop := start(t, d)
	r2, _ := tk.At(2)
	waitFor(t, st, r2.ID, 40*time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got, _ = sched.GetSchedRun(ctx, r1.ID)
	if got.State != archive.StateMissed || got.Reason == "" || !got.ActualStart.IsZero() {
		t.Fatalf("the run whose time passed: %+v", got)
	}
	got, _ = sched.GetSchedRun(ctx, r2.ID)
	if got.State != archive.StateFinished {
		t.Fatalf("the run still to come: %+v", got)
	}
}

// waitFor waits until a run has ended (bounded).
func waitFor(t *testing.T, st *archive.Store, id string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r, err := taskstore.New(st).GetSchedRun(context.Background(), id)
		if err == nil && r.State != archive.StateScheduled && r.State != archive.StateRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s not ended after %v: %+v %v", id, limit, r, err)
		}
		time.Sleep(200 * time.Millisecond) // bounded poll: the archive, until the deadline above
	}
}

// A daemon killed while its test ran leaves only its reservation, a
// lease nobody renews: another run needing the host takes it when the
// lease lapses, within LeaseTTL, not after the dead run's whole hold.
func TestKilledDaemonFreesItsHostsWithinTheLease(t *testing.T) {
	t.Parallel()
	dsn := archivetest.Backends(t)["sqlite"]
	ctx := context.Background()
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	d := newDaemon(t, "a", dsn, true, nil)
	tk := loopTask("tput", "a", "a", d.ServerPort(), 1, 0, 30*time.Second, 1)
	dead := loopTask("long", "a", "a", d.ServerPort(), 60, 0, 0, 1)
	// The killed daemon's run: its lease was taken just before the kill.
	killedAt := time.Now()
	if err := sched.Reserve(ctx, dead.Reservations("dead-0", killedAt)); err != nil {
		t.Fatal(err)
	}
	if _, err := sched.PutTask(ctx, tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	defer start(t, d)()
	r0, _ := tk.At(0)
	waitFor(t, st, r0.ID, 40*time.Second)
	got, err := sched.GetSchedRun(ctx, r0.ID)
	if err != nil || got.State != archive.StateFinished || !strings.Contains(got.Reason, "dead-0") {
		t.Fatalf("the run that waited: %+v %v", got, err)
	}
	freed := got.ActualStart.Sub(killedAt)
	t.Logf("the killed run's host was taken %v after its last lease began (hold %v)", freed.Round(time.Millisecond), dead.Hold())
	if freed > schedule.LeaseTTL+time.Second {
		t.Fatalf("the host was held %v after the kill, past the lease of %v", freed, schedule.LeaseTTL)
	}
}

// A test longer than a lease keeps its hosts: the running daemon renews
// the lease, so a run that wants the same host waits for the end.
func TestLeaseRenewedWhileTheTestRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a 17 s test")
	}
	dsn := archivetest.Backends(t)["sqlite"]
	ctx := context.Background()
	d := newDaemon(t, "a", dsn, true, nil)
	st, sched := d.Store(), d.Schedule()
	// The long run may be picked up up to 4 s late (this package's tests
	// run in parallel), still before the next run's instant 5 s later.
	long := loopTask("long", "a", "a", d.ServerPort(), 17, 0, 4*time.Second, 1)
	next := loopTask("next", "a", "a", d.ServerPort(), 1, 0, 40*time.Second, 1)
	next.Start = long.Start.Add(5 * time.Second)
	for _, tk := range []*schedule.Task{long, next} {
		if _, err := sched.PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	defer start(t, d)()
	r0, _ := long.At(0)
	r1, _ := next.At(0)
	waitFor(t, st, r1.ID, 60*time.Second)
	a, _ := sched.GetSchedRun(ctx, r0.ID)
	b, _ := sched.GetSchedRun(ctx, r1.ID)
	if a.State != archive.StateFinished || b.State != archive.StateFinished {
		t.Fatalf("runs: %+v %+v", a, b)
	}
	if b.ActualStart.Before(a.Ended) {
		t.Fatalf("the second run started %v before the first ended: the lease lapsed under a running test", a.Ended.Sub(b.ActualStart))
	}
}

// Three daemons and two sweeps (archive opens) start at the same instant
// on a new PostgreSQL database: all succeed.
func TestDaemonsStartTogetherOnANewDatabase(t *testing.T) {
	dsn, ok := archivetest.Backends(t)["postgres"]
	if !ok {
		t.Skip("needs PostgreSQL (" + archivetest.EnvPG + ")")
	}
	startTogether(t, dsn)
}

// Three daemons and two sweeps start at the same instant on a new SQLite
// archive: all succeed. River's migrations on SQLite once took no lock,
// and one daemon of two exited with "error applying version 005 [UP]:
// SQL logic error: no such index: river_migration_version_idx" (the
// other had applied it). Each round is a new file, since the race is
// only as likely as the daemons' instants line up.
func TestDaemonsStartTogetherOnANewSQLiteArchive(t *testing.T) {
	for round := 0; round < 5; round++ {
		startTogether(t, filepath.Join(t.TempDir(), fmt.Sprintf("round%d", round), "wireperf.db"))
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}
	}
}

// startTogether starts three daemons (their archive and job queue) and
// two sweeps (archive opens) at the same instant on dsn, and fails the
// test with each one's error.
func startTogether(t *testing.T, dsn string) {
	t.Helper()
	gate := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for _, host := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			d, err := daemon.New(context.Background(), daemon.Config{Host: host, DSN: dsn, Logger: quiet(), SpoolDir: t.TempDir()})
			if err != nil {
				errs <- fmt.Errorf("daemon %s: %w", host, err)
				return
			}
			d.Store().Close()
			d.CloseQueue()
		}()
	}
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			st, err := archive.Open(context.Background(), dsn)
			if err != nil {
				errs <- fmt.Errorf("sweep %d: %w", i, err)
				return
			}
			st.Close()
		}()
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
