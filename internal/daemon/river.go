package daemon

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/wireperf/wireperf/internal/archive"
)

// RunArgs is a River job: run one planned run at its instant. The run ID
// makes the job unique, so that planning the run again never adds a
// second job.
type RunArgs struct {
	RunID string `json:"run_id" river:"unique"`
}

// Kind names the job in River's tables.
func (RunArgs) Kind() string { return "wireperf_run" }

type pgxTx = pgx.Tx

// queue is River's client, whichever the database.
type queue interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	// Enqueue adds runs' jobs on a host's queue, available at once, in
	// one transaction; a job for a run already there is kept.
	Enqueue(ctx context.Context, host string, runIDs ...string) error
	// CompleteTx completes a job being worked in tx, the archive's
	// transaction that records its run's end, so that the two commit
	// together or not at all. done, called once tx has committed, keeps
	// River from completing the job again in a transaction of its own.
	CompleteTx(ctx context.Context, tx *sql.Tx, jobID int64, at time.Time) (done func(), err error)
	Close()
}

type riverQueue[TTx any] struct {
	client *river.Client[TTx]
	close  func()
	// txExecutor is River's executor on one of the archive's
	// transactions (database/sql, on the same database as the queue).
	txExecutor func(*sql.Tx) riverdriver.ExecutorTx
	polls      *quietPolls
}

func (q *riverQueue[TTx]) Start(ctx context.Context) error { return q.client.Start(ctx) }
func (q *riverQueue[TTx]) Stop(ctx context.Context) error  { return q.client.Stop(ctx) }
func (q *riverQueue[TTx]) StopAndCancel(ctx context.Context) error {
	return q.client.StopAndCancel(ctx)
}
func (q *riverQueue[TTx]) Close() { q.close() }

// CompleteTx runs River's own completion (the statement River's
// JobCompleteTx runs) in tx. A job no longer running (completed or
// rescued already) is left as it is: done then does nothing.
func (q *riverQueue[TTx]) CompleteTx(ctx context.Context, tx *sql.Tx, jobID int64, at time.Time) (func(), error) {
	set := riverdriver.JobSetStateCompleted(jobID, at, nil)
	rows, err := q.txExecutor(tx).JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID:              []int64{set.ID},
		Attempt:         []*int{set.Attempt},
		ErrData:         [][]byte{set.ErrData},
		FinalizedAt:     []*time.Time{set.FinalizedAt},
		MetadataDoMerge: []bool{false},
		MetadataUpdates: [][]byte{nil},
		ScheduledAt:     []*time.Time{set.ScheduledAt},
		State:           []rivertype.JobState{set.State},
	})
	if err != nil {
		return nil, fmt.Errorf("completing the run's job: %w", err)
	}
	if len(rows) == 0 {
		return func() {}, nil
	}
	return func() { q.polls.completedInTx(rows[0]) }, nil
}

func (q *riverQueue[TTx]) Enqueue(ctx context.Context, host string, runIDs ...string) error {
	if len(runIDs) == 0 {
		return nil
	}
	// No ScheduledAt: River makes any job given one "scheduled", which
	// only its leader's scheduler makes available, every 5 s; runs then
	// started up to 2.5 s late, in a 5 s rhythm (bench/mesh-scale). A
	// job without one is available at once, and its worker sleeps to the
	// run's instant.
	jobs := make([]river.InsertManyParams, len(runIDs))
	for i, id := range runIDs {
		jobs[i] = river.InsertManyParams{Args: RunArgs{RunID: id}, InsertOpts: &river.InsertOpts{
			Queue: QueueName(host),
			// A run is tried once: a second try would start late, and a
			// run never starts late.
			MaxAttempts: 1,
			UniqueOpts:  river.UniqueOpts{ByArgs: true},
		}}
	}
	_, err := q.client.InsertMany(ctx, jobs)
	return err
}

// fetchPoll is how often a worker looks for available jobs unasked. The
// daemon queues every job of its queue itself, and River wakes its
// producer when it does (quietDriver), so the poll is only what finds a
// job queued before a restart or one that a full set of workers left:
// River fetches those as soon as a worker is free, too.
const fetchPoll = time.Minute

// newQueue opens River on the archive's database: one PostgreSQL
// connection of the daemon's budget (MaxPostgresConns), polled (LISTEN
// holds a connection of its own, and is session state a pooler in
// transaction mode breaks), or one SQLite connection (River's SQLite
// driver wants a single one). River's migrations are applied first.
// dsn is the daemon's (PoolerDSN).
func newQueue(ctx context.Context, dsn string, d *Daemon) (queue, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &runWorker{d: d})
	cfg := &river.Config{
		Queues:  map[string]river.QueueConfig{QueueName(d.cfg.Host): {MaxWorkers: d.cfg.Workers}},
		Workers: workers,
		Logger:  d.log.With("component", "river"),
		// A test bounds its own time; River's default of one minute
		// would cut long tests.
		JobTimeout:        -1,
		FetchPollInterval: fetchPoll,
		// River's maintenance (its leader cleans finished jobs) needs one
		// client of the database, not all: each taking part asks to be
		// leader every 5 s.
		LeaderElectionDisabled: d.cfg.NoQueueMaintenance,
	}
	if archive.IsPostgres(dsn) {
		pcfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("job queue: %w", err)
		}
		pcfg.MaxConns, pcfg.MinConns = riverConns, 0
		pcfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
			return p.IdleDuration > archive.PingAfterIdle
		}
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("job queue: %w", err)
		}
		cfg.PollOnly = true
		drv := newQuietDriver(riverpgxv5.New(pool), time.Now)
		// The archive's transactions are database/sql's (pgx's stdlib):
		// River's database/sql driver runs the same statements on them.
		txExecutor := riverdatabasesql.New(nil).UnwrapExecutor
		if err := migrateRiver(ctx, drv, d, beginRiverPG(ctx, pool)); err != nil {
			pool.Close()
			return nil, err
		}
		c, err := river.NewClient(drv, cfg)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("job queue: %w", err)
		}
		return &riverQueue[pgxTx]{client: c, close: pool.Close, txExecutor: txExecutor, polls: drv.polls}, nil
	}
	db, err := archive.OpenSQLitePool(dsn)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	db.SetMaxOpenConns(1)
	drv := newQuietDriver(riversqlite.New(db), time.Now)
	if err := migrateRiver(ctx, drv, d, beginRiverSQLite(ctx, db)); err != nil {
		db.Close()
		return nil, err
	}
	// With one connection, polling is how jobs are found.
	cfg.PollOnly = true
	c, err := river.NewClient(drv, cfg)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return &riverQueue[*sql.Tx]{client: c, close: func() { db.Close() }, txExecutor: riversqlite.New(nil).UnwrapExecutor, polls: drv.polls}, nil
}

// migrateRiver runs River's migrations one a transaction (one of them
// adds an enum value that the next uses, which PostgreSQL allows only
// once it is committed), each in a transaction that begin has locked
// against every other daemon's, so that daemons starting together on a
// new database do not race: without it, two read the same versions and
// both apply the next, and one fails ("no such index" on SQLite). Each
// step reads the versions applied inside its lock.
func migrateRiver[TTx any](ctx context.Context, drv riverdriver.Driver[TTx], d *Daemon, begin func() (tx TTx, commit func() error, rollback func(), err error)) error {
	m, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: d.log.With("component", "river")})
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	step := func() (applied bool, err error) {
		tx, commit, rollback, err := begin()
		if err != nil {
			return false, err
		}
		defer rollback()
		res, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{MaxSteps: 1})
		if err != nil {
			return false, err
		}
		return len(res.Versions) > 0, commit()
	}
	for {
		applied, err := step()
		if err != nil {
			return fmt.Errorf("job queue migrations: %w", err)
		}
		if !applied {
			return nil
		}
	}
}

// beginRiverPG begins a migration step's transaction under an advisory
// lock. The lock is the transaction's, not the session's: behind a
// pooler in transaction mode, a session's lock and its unlock may reach
// two server connections, and the lock would outlive the daemon.
func beginRiverPG(ctx context.Context, pool *pgxpool.Pool) func() (pgxTx, func() error, func(), error) {
	return func() (pgxTx, func() error, func(), error) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		rollback := func() { tx.Rollback(context.WithoutCancel(ctx)) }
		const key = 8675309002 // the archive's migrations use ...001
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key); err != nil {
			rollback()
			return nil, nil, nil, err
		}
		return tx, func() error { return tx.Commit(ctx) }, rollback, nil
	}
}

// beginRiverSQLite begins a migration step's transaction as the
// archive's own SQLite migrations do: the pool's transactions begin
// IMMEDIATE (archive.OpenSQLitePool), taking the file's write lock
// before the step reads which versions are applied; another daemon's
// step waits for it within the busy timeout.
func beginRiverSQLite(ctx context.Context, db *sql.DB) func() (*sql.Tx, func() error, func(), error) {
	return func() (*sql.Tx, func() error, func(), error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		return tx, tx.Commit, func() { tx.Rollback() }, nil
	}
}
