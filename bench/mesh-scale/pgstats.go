package main

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgSampler watches PostgreSQL over its own connection: the connections
// to the harness's database, every sampleEvery, and at the start and the end
// the database's transactions and the server's CPU.
type pgSampler struct {
	conn *pgx.Conn

	mu       sync.Mutex
	maxConns int
	samples  int

	xacts0 int64
	// The steady state's start (markSteady): transactions and
	// pg_stat_statements' calls by statement.
	steadyXacts      int64
	steadySessions   int64
	sessionsOK       bool
	steadyStatements map[string]int64
	statementsOK     bool

	cpu0  time.Duration
	cpuOK bool
	began time.Time
}

func newPGSampler(ctx context.Context, dsn string) (*pgSampler, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &pgSampler{conn: conn}, nil
}

// start takes the first figures.
func (s *pgSampler) start(ctx context.Context) error {
	x, err := s.xacts(ctx)
	if err != nil {
		return err
	}
	s.xacts0, s.began = x, time.Now()
	s.cpu0, s.cpuOK = s.serverCPU(ctx)
	return nil
}

// xacts are the database's transactions so far, committed and rolled back.
func (s *pgSampler) xacts(ctx context.Context) (int64, error) {
	// The statistics of this backend's own transactions are flushed
	// at once; the others' within a second or so.
	var n int64
	err := s.conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}

// connections counts the connections to the database, this one left out.
func (s *pgSampler) connections(ctx context.Context) (int, error) {
	var n int
	err := s.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
	return n, err
}

// sampleEvery is how often the connections are counted: counting
// pg_stat_activity's rows at 1,000 connections took 17 ms of the
// server's CPU, which the harness must not spend every second.
const sampleEvery = 5 * time.Second

// loop samples the connections every sampleEvery until ctx ends.
func (s *pgSampler) loop(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		if n, err := s.connections(ctx); err == nil {
			s.mu.Lock()
			s.maxConns = max(s.maxConns, n)
			s.samples++
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// serverCPU is the CPU time of the PostgreSQL server: its postmaster's,
// its live processes' and those of its ended ones (which the postmaster
// has reaped). It is known only with the server on this machine, on
// Linux.
func (s *pgSampler) serverCPU(ctx context.Context) (time.Duration, bool) {
	var pid int
	if err := s.conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return 0, false
	}
	return postgresCPU(pid)
}

// pgFigures are what the sampler saw.
type pgFigures struct {
	MaxConnections int     `json:"max_connections"`
	Samples        int     `json:"connection_samples"`
	TPS            float64 `json:"transactions_per_second"`
	CPUSeconds     float64 `json:"cpu_seconds"` // -1: unknown
	CPUPercent     float64 `json:"cpu_percent"` // of one core, over the run; -1: unknown
}

// finish takes the last figures.
func (s *pgSampler) finish(ctx context.Context) (pgFigures, error) {
	x, err := s.xacts(ctx)
	if err != nil {
		return pgFigures{}, err
	}
	elapsed := time.Since(s.began)
	s.mu.Lock()
	f := pgFigures{MaxConnections: s.maxConns, Samples: s.samples, TPS: float64(x-s.xacts0) / elapsed.Seconds(), CPUSeconds: -1, CPUPercent: -1}
	s.mu.Unlock()
	if cpu1, ok := s.serverCPU(ctx); ok && s.cpuOK {
		f.CPUSeconds = (cpu1 - s.cpu0).Seconds()
		f.CPUPercent = 100 * f.CPUSeconds / elapsed.Seconds()
	}
	return f, nil
}

func (s *pgSampler) close() { s.conn.Close(context.Background()) }
