package archive

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// On PostgreSQL the run table is partitioned by range of recorded, one
// partition a month (UTC), named run_YYYY_MM. Why run and why recorded:
//
//   - A run's row holds its raw document (iperf3's JSON, a few to tens of
//     kB, stored out of line by PostgreSQL): most of an archive's bytes
//     are in run. run_interval has the most rows (one per interval and
//     stream) but each is about 100 bytes; its rows go with their run's
//     by run_id when pruned.
//   - A partitioned table's primary key must hold the partition key, and
//     its columns must not be null: recorded is set on every run (started
//     is not, for a run that never started), and a run is recorded once,
//     after it ran, so a month's partition stops growing when the month
//     ends and is dropped whole when all of it is old.
//
// SQLite's run table is one table, as before.

// runPartitionName is the partition of run that holds runs recorded in
// t's month (UTC).
func runPartitionName(t time.Time) string {
	return "run_" + t.UTC().Format("2006_01")
}

// monthStart is the first instant of t's month, UTC.
func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// ensureRunPartition creates, on PostgreSQL, the partition of run for
// t's month if it is missing. It runs in a transaction of its own under
// the migrations' advisory lock, so that daemons storing the month's
// first runs at once create it once; a Store remembers the months it
// has seen.
func (s *Store) ensureRunPartition(ctx context.Context, t time.Time) error {
	if s.dialect != postgresDialect {
		return nil
	}
	name := runPartitionName(t)
	if _, ok := s.runMonths.Load(name); ok {
		return nil
	}
	from := monthStart(t)
	to := from.AddDate(0, 1, 0)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return err
	}
	// name is built from a date alone: nothing to quote.
	stmt := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF run FOR VALUES FROM ('%s') TO ('%s')`,
		name, from.Format(time.RFC3339), to.Format(time.RFC3339))
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("creating the run partition %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.runMonths.Store(name, true)
	return nil
}

// EnsureRunPartitions creates the run partitions of every month from
// from's to until's, ahead of the runs stored in them (a planner that
// knows its horizon calls it). It does nothing on SQLite.
func (s *Store) EnsureRunPartitions(ctx context.Context, from, until time.Time) error {
	for m := monthStart(from); !m.After(until); m = m.AddDate(0, 1, 0) {
		if err := s.ensureRunPartition(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// runPartition is one monthly partition of run.
type runPartition struct {
	name     string
	from, to time.Time
}

// runPartitions lists run's partitions on PostgreSQL, oldest first; none
// on SQLite.
func (s *Store) runPartitions(ctx context.Context, q queryer) ([]runPartition, error) {
	if s.dialect != postgresDialect {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'run'::regclass ORDER BY c.relname`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []runPartition
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		from, err := time.Parse("2006_01", strings.TrimPrefix(name, "run_"))
		if err != nil {
			continue // not one of ours: left alone
		}
		out = append(out, runPartition{name: name, from: from, to: from.AddDate(0, 1, 0)})
	}
	return out, rows.Err()
}

// queryer is a database or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
