package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
	"github.com/wireperf/wireperf/internal/testutil/pgbouncer"
)

// Options are a simulation's settings.
type Options struct {
	Hosts  int
	Length time.Duration // how long the schedule runs
	DSN    string        // a PostgreSQL database
	// NewDB creates a database of its own in DSN's cluster for the run
	// (and drops it after, unless KeepDB); else DSN's database is used
	// as it is, and must hold no other run of this harness.
	NewDB, KeepDB bool
	Draw          uint64 // which draw of sampled partners: the same draw, the same partners
	// ProbeRandomSlip spreads each period's probes over this much time
	// (the schedule's random_slip); 0 starts them all on the period.
	ProbeRandomSlip time.Duration
	// ArchiveConns caps each daemon's archive pool (0: the daemon's own
	// size). River's pool is the daemon's.
	ArchiveConns int
	Workers      int // each daemon's runs at once (0: the daemon's default)
	// PgBouncer, when above 0, puts a PgBouncer in transaction mode
	// with this many server connections between the daemons and
	// PostgreSQL (the harness's own connections go direct).
	PgBouncer int
	// QueueMaintainers is how many daemons take part in River's leader
	// election (and its maintenance); 0: all of them.
	QueueMaintainers int
	Log              string // the daemons' log file ("": none)
	Progress         io.Writer
}

// The harness's own timings.
const (
	// startMargin: the schedule's first runs come this long after the
	// tasks are stored, so that every daemon has started and planned
	// them (it plans as it starts and every 30 s after) and queued them
	// (5 s ahead) in time.
	startMargin = daemon.DefaultPlanEvery + 2*daemon.DefaultLead
	// openDaemons bounds the daemons opening at once.
	openDaemons = 4
	// daemonGrace is each daemon's grace at the end; no run is under way
	// by then.
	daemonGrace = 5 * time.Second
)

// run runs the simulation and reports what the archive and PostgreSQL
// saw.
func run(ctx context.Context, o Options) (*Report, error) {
	if !archive.IsPostgres(o.DSN) {
		return nil, errors.New("-dsn: want a PostgreSQL DSN (postgres://…): the harness measures PostgreSQL")
	}
	progress := func(format string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, time.Now().Format("15:04:05 ")+format+"\n", a...)
		}
	}
	dsn := o.DSN
	if o.NewDB {
		var err error
		var drop func()
		dsn, drop, err = createDatabase(ctx, o.DSN)
		if err != nil {
			return nil, err
		}
		if !o.KeepDB {
			defer drop()
		}
		progress("database %s", archive.Redact(dsn))
	}
	store, err := archive.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	sched := taskstore.New(store) // the schedule's state, in the archive's database
	daemonDSN := dsn
	var bouncer *pgbouncer.Bouncer
	if o.PgBouncer > 0 {
		// Every daemon holds at most 2 client connections to it.
		bouncer, err = pgbouncer.Start(archive.PostgresDSN(dsn), pgbouncer.Options{PoolSize: o.PgBouncer, MaxClients: 2*o.Hosts + 50})
		if err != nil {
			return nil, err
		}
		defer bouncer.Stop()
		// One application_name for every daemon, as docs/daemon.md asks
		// behind a pooler: PgBouncer sets a client's own on the server
		// connection each time a transaction lands on one another
		// client used last, a statement more for most transactions.
		u, err := url.Parse(bouncer.DSN)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		q.Set("application_name", "wireperf-daemon")
		u.RawQuery = q.Encode()
		daemonDSN = u.String()
		progress("PgBouncer (transaction mode, %d server connections) at %s", o.PgBouncer, archive.Redact(bouncer.DSN))
	}
	if prior, err := sched.SchedRuns(ctx, taskstore.RunQuery{Limit: 1}); err != nil {
		return nil, err
	} else if len(prior) > 0 {
		return nil, fmt.Errorf("%s holds runs already: give an empty database, or -new-db", store.DSN())
	}
	sampler, err := newPGSampler(ctx, archive.PostgresDSN(dsn))
	if err != nil {
		return nil, err
	}
	defer sampler.close()

	logTo := io.Discard
	if o.Log != "" {
		f, err := os.Create(o.Log)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		logTo = f
	}
	logger := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelWarn}))
	spool, err := os.MkdirTemp("", "mesh-scale-spool-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(spool)

	cpu0, _, _ := selfUsage()
	var bouncerCPU0 time.Duration
	bouncerCPUOK := false
	if bouncer != nil {
		bouncerCPU0, bouncerCPUOK = processCPU(bouncer.PID)
	}
	wall0 := time.Now()
	if err := sampler.start(ctx); err != nil {
		return nil, err
	}
	sctx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sampler.loop(sctx)
	}()
	defer func() { stopSampling(); <-sampled }()

	// The daemons, opened a few at a time (each brings the schemas up to
	// date first), then run until the schedule is over.
	progress("opening %d daemons", o.Hosts)
	daemons := make([]*daemon.Daemon, o.Hosts)
	sem := make(chan struct{}, openDaemons)
	var wg sync.WaitGroup
	errs := make([]error, o.Hosts)
	for i := range o.Hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			host := hostName(i)
			d, err := daemon.New(ctx, daemon.Config{Host: host, DSN: daemonDSN, Grace: daemonGrace, Workers: o.Workers,
				SpoolDir: filepath.Join(spool, host), Logger: logger, RunTest: noopTest,
				NoQueueMaintenance: o.QueueMaintainers > 0 && i >= o.QueueMaintainers})
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", host, err)
				return
			}
			if o.ArchiveConns > 0 {
				d.Store().SetMaxConns(o.ArchiveConns)
			}
			daemons[i] = d
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(daemons)
		return nil, err
	}
	// The schedule, stored before the daemons run: each plans it as it
	// starts, and again every 30 s, well before its first runs.
	start := time.Now().Add(startMargin).Truncate(time.Second)
	end := start.Add(o.Length)
	// Until is inclusive: the last runs are those before the end.
	tasks, err := meshTasks(o.Hosts, o.Draw, start, end.Add(-time.Millisecond), o.ProbeRandomSlip)
	if err != nil {
		closeAll(daemons)
		return nil, err
	}
	if _, err := sched.ApplyTasks(ctx, origin, tasks, time.Now()); err != nil {
		closeAll(daemons)
		return nil, err
	}
	progress("%d tasks stored; the schedule runs from %s to %s", len(tasks), start.Format("15:04:05"), end.Format("15:04:05"))
	steadyMarked := false
	dctx, stopDaemons := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDaemons()
	var running sync.WaitGroup
	var failedMu sync.Mutex
	var failed []string // daemons whose Run ended before they were stopped
	for i, d := range daemons {
		if d == nil {
			continue
		}
		running.Add(1)
		go func() {
			defer running.Done()
			err := d.Run(dctx)
			if dctx.Err() == nil || err != nil {
				failedMu.Lock()
				failed = append(failed, fmt.Sprintf("%s: %v", hostName(i), err))
				failedMu.Unlock()
			}
		}()
	}
	stopAll := func() { stopDaemons(); running.Wait() }

	// The harness's own connection is kept in use meanwhile: once the
	// pool closed it as idle, a cluster at its max_connections would
	// refuse it a new one.
	for now := time.Now(); now.Before(end); now = time.Now() {
		next := now.Add(10 * time.Second)
		if !steadyMarked && next.After(start) {
			next = start // the cost per run counts from the schedule's start
		}
		if next.After(end) {
			next = end
		}
		if err := sleepUntil(ctx, next); err != nil {
			stopAll()
			return nil, err
		}
		if err := store.Ping(ctx); err != nil {
			stopAll()
			return nil, err
		}
		if !steadyMarked && !time.Now().Before(start) {
			if err := sampler.markSteady(ctx); err != nil {
				stopAll()
				return nil, err
			}
			steadyMarked = true
		}
	}
	// Every run planned before the end is over by its deadline, its
	// worker's notTakenGrace, and its hold.
	settleBy := end.Add(throughputTest.slip + 10*time.Second + 2*time.Minute)
	progress("schedule over; waiting for its last runs to end (until %s at most)", settleBy.Format("15:04:05"))
	for {
		open, err := sched.SchedRuns(ctx, taskstore.RunQuery{Until: end, States: []string{archive.StateScheduled, archive.StateRunning}, Limit: 1})
		if err != nil {
			stopAll()
			return nil, err
		}
		if len(open) == 0 || time.Now().After(settleBy) {
			break
		}
		// Bounded poll: the archive, until settleBy.
		if err := sleepUntil(ctx, time.Now().Add(time.Second)); err != nil {
			stopAll()
			return nil, err
		}
	}
	finished, err := sched.SchedRuns(ctx, taskstore.RunQuery{Since: start, Until: end, States: []string{archive.StateFinished}})
	if err != nil {
		stopAll()
		return nil, err
	}
	cost, err := sampler.cost(ctx, len(finished))
	if err != nil {
		stopAll()
		return nil, err
	}
	pg, err := sampler.finish(ctx)
	if err != nil {
		stopAll()
		return nil, err
	}
	cpu1, rss, usageOK := selfUsage()
	wall := time.Since(wall0)
	pooler := poolerFigures{PoolSize: o.PgBouncer, CPUSeconds: -1, CPUPercent: -1}
	if bouncerCPUOK {
		if c1, ok := processCPU(bouncer.PID); ok {
			pooler.CPUSeconds = (c1 - bouncerCPU0).Seconds()
			pooler.CPUPercent = 100 * pooler.CPUSeconds / wall.Seconds()
		}
	}
	stopAll()

	runs, err := sched.SchedRuns(ctx, taskstore.RunQuery{Since: start, Until: end})
	if err != nil {
		return nil, err
	}
	rep := analyse(runs)
	rep.Expected = expectedRuns(tasks, start, end)
	rep.DaemonErrors = failed
	rep.Hosts, rep.Tasks, rep.Minutes = o.Hosts, len(tasks), o.Length.Minutes()
	rep.Start, rep.End = start.UTC(), end.UTC()
	rep.PostgreSQL = pg
	rep.Cost = cost
	if bouncer != nil {
		rep.PgBouncer = &pooler
	}
	rep.QueueMaintainers = o.QueueMaintainers
	if o.QueueMaintainers == 0 {
		rep.QueueMaintainers = o.Hosts
	}
	rep.Harness = harnessFigures{CPUSeconds: -1, CPUPercent: -1, PeakRSSMiB: -1}
	if usageOK {
		rep.Harness = harnessFigures{CPUSeconds: (cpu1 - cpu0).Seconds(), CPUPercent: 100 * (cpu1 - cpu0).Seconds() / wall.Seconds(),
			PeakRSSMiB: float64(rss) / (1 << 20)}
	}
	return rep, nil
}

// closeAll closes the archives of daemons that never ran, on the way out
// with an error (their River pools go with the process).
func closeAll(daemons []*daemon.Daemon) {
	for _, d := range daemons {
		if d != nil {
			d.Store().Close()
		}
	}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// createDatabase creates a database of the harness's own in dsn's
// cluster, and returns its DSN and what drops it.
func createDatabase(ctx context.Context, dsn string) (string, func(), error) {
	u, err := url.Parse(archive.PostgresDSN(dsn))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, errors.New("-new-db: want the DSN as a URL (postgres://user@host:port/db)")
	}
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("mesh_scale_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		return "", nil, fmt.Errorf("creating database %s: %w", name, err)
	}
	admin := u.String()
	u.Path = "/" + name
	drop := func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
	return u.String(), drop, nil
}

// expectedRuns counts the runs the tasks plan in [start, end).
func expectedRuns(tasks []*schedule.Task, start, end time.Time) int {
	n := 0
	for _, t := range tasks {
		for seq := 0; ; seq++ {
			r, ok := t.At(seq)
			if !ok || !r.Planned.Before(end) {
				break
			}
			if !r.Planned.Before(start) {
				n++
			}
		}
	}
	return n
}

// analyse reads the runs the schedule planned: their lag, overlaps and
// what became of them.
func analyse(runs []*taskstore.SchedRun) *Report {
	rep := &Report{States: map[string]int{}}
	all := newLag("all")
	byTest := map[string]*lagFigures{}
	var exclusive []*taskstore.SchedRun
	missed := map[string]*reasonCount{}
	for _, r := range runs {
		rep.Runs++
		rep.States[r.State]++
		if lag, ok := r.Lag(); ok {
			all.record(lag)
			lt := byTest[r.Test]
			if lt == nil {
				lt = newLag(r.Test)
				byTest[r.Test] = lt
			}
			lt.record(lag)
			if strings.Contains(r.Reason, "waited for") {
				rep.WaitedForHosts++
			}
		}
		if r.Class == schedule.Exclusive {
			exclusive = append(exclusive, r)
		}
		switch r.State {
		case archive.StateMissed, archive.StateFailed, archive.StateAborted:
			if r.Reason == "" {
				rep.WithoutReason++
			}
			key := r.State + ": " + reasonKind(r.Reason)
			rc := missed[key]
			if rc == nil {
				rc = &reasonCount{State: r.State, Kind: reasonKind(r.Reason), Example: r.Reason}
				missed[key] = rc
			}
			rc.Runs++
		case archive.StateScheduled, archive.StateRunning:
			rep.LeftOpen++
		}
	}
	rep.Lag = append(rep.Lag, all.figures())
	tests := make([]string, 0, len(byTest))
	for name := range byTest {
		tests = append(tests, name)
	}
	sort.Strings(tests)
	for _, name := range tests {
		rep.Lag = append(rep.Lag, byTest[name].figures())
	}
	rep.ExclusiveRuns = len(exclusive)
	rep.Overlaps = daemon.Overlaps(exclusive)
	for _, rc := range missed {
		rep.Unsuccessful = append(rep.Unsuccessful, *rc)
	}
	sort.Slice(rep.Unsuccessful, func(i, j int) bool {
		a, b := rep.Unsuccessful[i], rep.Unsuccessful[j]
		if a.Runs != b.Runs {
			return a.Runs > b.Runs
		}
		return a.State+a.Kind < b.State+b.Kind
	})
	return rep
}

var figure = regexp.MustCompile(`[0-9][0-9a-f.:-]*(µs|ms|s|m|h)?`)

// reasonKind is a reason without its figures, run IDs and instants, so
// that reasons of one kind are counted together.
func reasonKind(reason string) string {
	if reason == "" {
		return "(no reason)"
	}
	if i := strings.Index(reason, " (run "); i >= 0 {
		reason = reason[:i]
	}
	return figure.ReplaceAllString(reason, "…")
}

// lagFigures records lags in microseconds, up to an hour, to 3
// significant figures.
type lagFigures struct {
	name string
	h    *hdrhistogram.Histogram
}

func newLag(name string) *lagFigures {
	return &lagFigures{name: name, h: hdrhistogram.New(0, time.Hour.Microseconds(), 3)}
}

func (l *lagFigures) record(d time.Duration) {
	// The worker sleeps to the planned instant: a run never starts
	// early, but the archive keeps instants to the microsecond.
	l.h.RecordValue(max(d, 0).Microseconds())
}

func (l *lagFigures) figures() LagFigures {
	us := func(v int64) float64 { return float64(v) / 1e6 }
	return LagFigures{Test: l.name, Runs: l.h.TotalCount(), P50: us(l.h.ValueAtQuantile(50)), P99: us(l.h.ValueAtQuantile(99)),
		Max: us(l.h.Max())}
}
