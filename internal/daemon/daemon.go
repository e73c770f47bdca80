// Package daemon is `wireperf daemon`: one long-running process per host
// that serves tests (with the agent role), plans this host's share of the
// schedule kept in the archive, runs its tests at their instants through
// River, a job queue on the same database, and answers an HTTP API.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/meshmetrics"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// Config is a daemon's configuration, as the command line builds it.
type Config struct {
	Host string // this host's name in the mesh: its queue and its tasks' source
	DSN  string // the archive, which also holds River's tables

	// Server, when set, is served for the daemon's life (the agent role
	// is its Agent field).
	Server *server.Config
	// API is the HTTP API's listener address; "" serves no API.
	API string
	// Token is the bearer token API writes need; "" refuses every write.
	Token          string
	ReadsNeedToken bool

	Grace     time.Duration // how long a running test may finish after SIGTERM
	Horizon   time.Duration // how far ahead runs are planned
	PlanEvery time.Duration // how often this host plans
	Lead      time.Duration // a run's job becomes due this long before its start
	Workers   int           // runs at once on this host
	// NoQueueMaintenance keeps this daemon's job queue out of River's
	// leader election, so that it never runs River's maintenance (the
	// cleaning of finished jobs). In a large mesh a few daemons keep it
	// and the rest spare the database their elections; at least one
	// must keep it.
	NoQueueMaintenance bool

	// Binary runs the tests (default: this executable); Env is added to
	// its environment.
	Binary string
	Env    []string
	// RunTest, when set, runs a task's test in place of the child
	// process of Binary and returns its -J document (the simulation
	// harness, bench/mesh-scale, runs no-op tests through it). It is
	// bounded by the run's hold, as the child is.
	RunTest func(ctx context.Context, t *schedule.Task) (document []byte, err error)
	// ClientArgs are flags from this daemon's own configuration that
	// every test it runs gets (its key file, its TLS trust): a test line
	// may not name files, but the daemon's administrator may.
	ClientArgs []string
	// Iperf3Logins are iperf3's credentials of the servers that require
	// them, by the host a test dials; from the configuration file only.
	Iperf3Logins []Iperf3Login
	// SpoolDir keeps the results of runs that ended while the archive
	// was unreachable, until it is back (default: $XDG_STATE_HOME, else
	// ~/.local/state, /wireperf/spool-HOST).
	SpoolDir string

	Logger *slog.Logger
	Clock  Clock
}

// Clock is the daemon's time, replaced in tests: every scheduling
// decision (when a run starts, when it is missed, when its lease is
// renewed, when the planner looks again) reads it. Deadlines that bound
// I/O (the archive's writes, the API's connections, a hung test, the
// grace period) are the machine's.
type Clock interface {
	Now() time.Time
	// SleepUntil waits until t or until ctx ends (then its error).
	SleepUntil(ctx context.Context, t time.Time) error
	// Every ticks every d until stop is called; like a time.Ticker, it
	// drops ticks its reader is not ready for.
	Every(d time.Duration) (ticks <-chan time.Time, stop func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) Every(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Defaults.
const (
	DefaultAPI       = "127.0.0.1:5280"
	DefaultGrace     = 30 * time.Second
	DefaultHorizon   = 10 * time.Minute
	DefaultPlanEvery = 30 * time.Second
	// DefaultLead: a run's job is due this long before the run, and its
	// worker sleeps to the exact instant. Workers are woken when their
	// daemon queues a job (fetchPoll).
	DefaultLead    = 5 * time.Second
	DefaultWorkers = 4
)

func (c *Config) fill() error {
	if !hostName.MatchString(c.Host) {
		return fmt.Errorf("host %q: want letters, digits, '.', '_' or '-'", c.Host)
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.Horizon <= 0 {
		c.Horizon = DefaultHorizon
	}
	if c.PlanEvery <= 0 {
		c.PlanEvery = DefaultPlanEvery
	}
	if c.Lead <= 0 {
		c.Lead = DefaultLead
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.SpoolDir == "" {
		base := os.Getenv("XDG_STATE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("spool directory: %w (set spool_dir)", err)
			}
			base = filepath.Join(home, ".local", "state")
		}
		c.SpoolDir = filepath.Join(base, "wireperf", "spool-"+c.Host)
	}
	if c.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this executable to run tests with: %w", err)
		}
		c.Binary = exe
	}
	return nil
}

var hostName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// QueueName is a host's River queue: River wants lower-case letters,
// digits and single separators.
func QueueName(host string) string {
	var b strings.Builder
	b.WriteString("wireperf")
	sep := true
	for _, r := range strings.ToLower(host) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if sep {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			sep = false
			continue
		}
		sep = true
	}
	return b.String()
}

// Reads without a token from one address: a grid page and its blocks,
// a Prometheus scrape, a script paging through the tasks, at once, then
// ReadRate a second.
const (
	ReadBurst = 60
	ReadRate  = 10
)

// Daemon is a running daemon.
type Daemon struct {
	cfg   Config
	log   *slog.Logger
	store *archive.Store   // the results archive
	sched *taskstore.Store // the schedule's state, in the archive's database and pool
	queue queue
	due   dueRuns // scheduled runs coming due, for the queue
	// planned is this host's tasks as the last plan read them, by ID: a
	// run's worker takes its task from here, not from the archive. A task
	// changed or removed since loses its scheduled runs in the archive,
	// so its worker's start (taskstore.Start) finds nothing to start.
	planned atomic.Pointer[map[string]*schedule.Task]
	// plans counts plans: every fullRefreshEvery-th, from the first, reads
	// this host's scheduled runs from the archive (refreshDue).
	plans atomic.Int64

	srv     *server.Server
	apiLn   net.Listener
	metrics *meshmetrics.Metrics
	lastRun lastResults // the grid's copy of each pair's last run (gridcache.go)
	tasks   taskList    // the API's and the views' copy of the tasks (taskcache.go)
	runs    runCounts   // /metrics' count of this host's runs by state (runcounts.go)
	baseMu  sync.Mutex
	base    gridBaseCache // the grid's hosts, groups and pairs of that copy
	conns   *connTracker  // the API's connections (nil before Run)
	spool   spool         // results waiting for the archive
	// archiveUp is whether the archive answered last time it was asked.
	archiveUp atomic.Bool
	lastDown  atomic.Int64 // when it last did not answer (Unix ns; 0: never)
	// tokenLimit slows wrong API tokens per source address.
	tokenLimit *auth.FailureLimiter
	// readLimit slows reads without a token per source address: a burst
	// of ReadBurst, then ReadRate a second.
	readLimit *auth.FailureLimiter
	running   sync.WaitGroup // runs in progress, for tests
	// scheduleBuilt counts the runs /api/schedule's pages built, and
	// abandoned the requests a handler stopped because the client went:
	// the API's cost, seen in /metrics and by the tests.
	scheduleBuilt, abandoned atomic.Int64
}

// New opens the archive (bringing its schema and River's up to date),
// records as aborted the runs this host left running when it last
// stopped, and binds the server and the API. Run starts the rest.
func New(ctx context.Context, cfg Config) (*Daemon, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, log: cfg.Logger.With("host", cfg.Host), spool: spool{cfg.SpoolDir}, tokenLimit: auth.NewFailureLimiter(),
		readLimit: &auth.FailureLimiter{Burst: ReadBurst, Rate: ReadRate, MaxSources: auth.DefaultMaxSources}}
	d.metrics = d.newMetrics()
	dsn, err := PoolerDSN(cfg.DSN, cfg.Host)
	if err != nil {
		return nil, err
	}
	if d.store, err = archive.Open(ctx, dsn); err != nil {
		return nil, err
	}
	d.sched = taskstore.New(d.store)
	ok := false
	defer func() {
		if !ok {
			d.close()
		}
	}()
	if archive.IsPostgres(dsn) {
		d.store.SetMaxConns(archiveConns) // River has the other (MaxPostgresConns)
	}
	if d.queue, err = newQueue(ctx, dsn, d); err != nil {
		return nil, err
	}
	d.archiveUp.Store(true)
	// Results spooled before a stop are recorded first: their runs are
	// still marked running, and would be taken for runs cut short.
	if n := d.flushSpool(ctx); n > 0 {
		d.log.Info("spooled runs recorded", "runs", n)
	}
	ids, err := d.sched.AbortRunning(ctx, cfg.Host, "the daemon stopped while the test ran", cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		d.log.Warn("run aborted: the daemon stopped while it ran", "run", id)
		if err := d.sched.Release(ctx, id, cfg.Clock.Now()); err != nil {
			return nil, err
		}
	}
	if cfg.Server != nil {
		sc := *cfg.Server
		if sc.Logger == nil {
			sc.Logger = d.log
		}
		d.srv = server.New(sc)
		if err := d.srv.Listen(); err != nil {
			return nil, err
		}
	}
	if cfg.API != "" {
		if d.apiLn, err = net.Listen("tcp", cfg.API); err != nil {
			return nil, fmt.Errorf("API listener: %w", err)
		}
	}
	ok = true
	return d, nil
}

// Store is the daemon's archive.
func (d *Daemon) Store() *archive.Store { return d.store }

// Schedule is the daemon's schedule state: tasks, planned runs and
// reservations, in the archive's database.
func (d *Daemon) Schedule() *taskstore.Store { return d.sched }

// TasksOf is the schedule's state in archive a, the tasks the daemons
// plan from, for the commands that change or read it without a daemon
// (wireperf task, schedule, mesh apply): they reach the tasks through
// the package that runs them.
func TasksOf(a *archive.Store) *taskstore.Store { return taskstore.New(a) }

// APIAddr is where the API listens (nil without one).
func (d *Daemon) APIAddr() net.Addr {
	if d.apiLn == nil {
		return nil
	}
	return d.apiLn.Addr()
}

// ServerPort is the test server's port (0 without one).
func (d *Daemon) ServerPort() int {
	if d.srv == nil {
		return 0
	}
	return d.srv.Addr().Port
}

func (d *Daemon) close() {
	if d.apiLn != nil {
		d.apiLn.Close()
	}
	if d.queue != nil {
		d.queue.Close()
	}
	if d.store != nil {
		d.store.Close()
	}
}

// Run runs the daemon until ctx ends: then it stops taking runs, lets a
// running test finish for the grace period, stops the rest (recorded
// aborted), and returns.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.close()
	// River's own context outlives ctx: the running tests' contexts end
	// only when the grace period does.
	qctx, stopQueue := context.WithCancel(context.WithoutCancel(ctx))
	defer stopQueue()
	if err := d.queue.Start(qctx); err != nil {
		return fmt.Errorf("starting the job queue: %w", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(2)
	go func() {
		defer wg.Done()
		d.planLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		d.spoolLoop(ctx)
	}()
	// The server stops after the queue: this host's own running tests,
	// and other hosts' tests to it, have the grace period too.
	sctx, stopServer := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServer()
	if d.srv != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.srv.Serve(sctx); err != nil {
				errs <- fmt.Errorf("server: %w", err)
			}
		}()
	}
	var api *http.Server
	if d.apiLn != nil {
		// The API's connection ages are the machine's time, like the
		// HTTP server's own deadlines: they bound I/O, not the schedule.
		d.conns = newConnTracker(MaxAPIConns, time.Now)
		api = &http.Server{Handler: d.Mux(), ConnState: d.conns.ConnState, MaxHeaderBytes: apiMaxHeaderBytes,
			ReadHeaderTimeout: apiReadHeaderTimeout, ReadTimeout: apiReadTimeout, WriteTimeout: apiWriteTimeout, IdleTimeout: apiIdleTimeout,
			ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelDebug)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := api.Serve(d.apiLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("API: %w", err)
			}
		}()
	}
	d.log.Info("daemon running", "queue", QueueName(d.cfg.Host), "archive", d.store.DSN(), "api", d.APIAddr(), "server_port", d.ServerPort())
	<-ctx.Done()
	d.log.Info("stopping: running tests have the grace period to finish", "grace", d.cfg.Grace)
	// The grace period and the stops below bound the process's exit:
	// machine time, not the schedule's clock.
	gctx, cancel := context.WithTimeout(context.Background(), d.cfg.Grace)
	err := d.queue.Stop(gctx)
	cancel()
	if err != nil {
		d.log.Warn("grace period over: stopping the running tests", "err", err)
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.queue.StopAndCancel(sctx); err != nil {
			d.log.Error("the job queue did not stop", "err", err)
		}
		cancel()
	}
	stopServer()
	if api != nil {
		actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		api.Shutdown(actx)
		cancel()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	d.log.Info("daemon stopped")
	return errors.Join(all...)
}
