package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/trace/traceplan"
)

// Path is the path a trace run found from Source to Dest: its hops'
// answering addresses in order (trace.Report.Path), and whether it
// differs from the pair's previous path (traceplan.Changed).
type Path struct {
	RunID   string
	Source  string
	Dest    string
	Test    string // the trace test's name: a pair's UDP and ICMP traces may differ
	At      time.Time
	Hops    []string
	Reached bool
	// Changed says the path differs from Prev, the pair's path in the
	// run before this one; the pair's first path has changed nothing.
	Changed bool
	Prev    []string
}

// PutPath stores a trace run's path (its run stored first, by PutRun),
// comparing it with the pair's previous path. Storing a run's path again
// replaces it. A path stored after a later one of its pair (a spooled
// run recorded late) is compared with the one before it; the later
// one's comparison is left as it was.
func (s *Store) PutPath(ctx context.Context, p *Path) error {
	if p.RunID == "" || p.Source == "" || p.Dest == "" || p.At.IsZero() {
		return errors.New("a path needs its run's ID, its pair and its time")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM run_path WHERE run_id = ?`), p.RunID); err != nil {
		return err
	}
	var prev string
	err = tx.QueryRowContext(ctx, s.q(`SELECT path FROM run_path WHERE source = ? AND dest = ? AND test = ? AND at < ?
		ORDER BY at DESC LIMIT 1`), p.Source, p.Dest, p.Test, p.At.UTC()).Scan(&prev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		p.Prev, p.Changed = nil, false
	case err != nil:
		return err
	default:
		p.Prev = traceplan.ParsePathKey(prev)
		p.Changed = traceplan.Changed(p.Prev, p.Hops)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_path (run_id, source, dest, test, at, path, reached, changed, prev_path)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		p.RunID, p.Source, p.Dest, p.Test, p.At.UTC(), traceplan.PathKey(p.Hops), boolInt(p.Reached), boolInt(p.Changed), prev); err != nil {
		return fmt.Errorf("storing the path of run %s: %w", p.RunID, err)
	}
	return tx.Commit()
}

// PathFilter picks paths: of one pair and test when they are given, at
// or after Since when it is.
type PathFilter struct {
	Source, Dest, Test string
	Since              time.Time
	ChangedOnly        bool
}

// Paths are the paths the filter picks, oldest first.
func (s *Store) Paths(ctx context.Context, f PathFilter) ([]Path, error) {
	q := `SELECT run_id, source, dest, test, at, path, reached, changed, prev_path FROM run_path WHERE 1 = 1`
	var args []any
	for _, c := range []struct{ col, v string }{{"source", f.Source}, {"dest", f.Dest}, {"test", f.Test}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	if !f.Since.IsZero() {
		q += ` AND at >= ?`
		args = append(args, f.Since.UTC())
	}
	if f.ChangedOnly {
		q += ` AND changed = 1`
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY at, run_id`), args...)
	if err != nil {
		return nil, err
	}
	return scanPaths(rows)
}

// PathPair names a pair's trace test.
type PathPair struct{ Source, Dest, Test string }

// PathChanges counts each pair's path changes over the whole archive.
// A pair traced but never changed is counted, with 0.
func (s *Store) PathChanges(ctx context.Context) (map[PathPair]int64, error) {
	return s.pathChanges(ctx, `SELECT source, dest, test, SUM(changed) FROM run_path GROUP BY source, dest, test`)
}

// PathChangesFrom is PathChanges for the pairs whose source is source,
// read through run_path_pair's leading column.
func (s *Store) PathChangesFrom(ctx context.Context, source string) (map[PathPair]int64, error) {
	return s.pathChanges(ctx, s.q(`SELECT source, dest, test, SUM(changed) FROM run_path WHERE source = ? GROUP BY source, dest, test`), source)
}

func (s *Store) pathChanges(ctx context.Context, query string, args ...any) (map[PathPair]int64, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[PathPair]int64{}
	for rows.Next() {
		var p PathPair
		var n int64
		if err := rows.Scan(&p.Source, &p.Dest, &p.Test, &n); err != nil {
			return nil, err
		}
		out[p] = n
	}
	return out, rows.Err()
}

// scanPaths reads rows of run_path's run_id, source, dest, test, at,
// hops, reached, changed and prev.
func scanPaths(rows *sql.Rows) ([]Path, error) {
	defer rows.Close()
	var out []Path
	for rows.Next() {
		var p Path
		var hops, prev string
		var reached, changed int
		if err := rows.Scan(&p.RunID, &p.Source, &p.Dest, &p.Test, &p.At, &hops, &reached, &changed, &prev); err != nil {
			return nil, err
		}
		p.At = p.At.UTC()
		p.Hops, p.Prev = traceplan.ParsePathKey(hops), traceplan.ParsePathKey(prev)
		p.Reached, p.Changed = reached != 0, changed != 0
		out = append(out, p)
	}
	return out, rows.Err()
}

// BlockPathChanges are the path changes since since between a host of a
// and a host of b, either way, oldest first: the route changes a block's
// histories mark. It reads those pairs' paths in the window through
// run_path_pair.
func (s *Store) BlockPathChanges(ctx context.Context, a, b []string, since time.Time) ([]Path, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, nil
	}
	var parts []string
	var args []any
	EitherWay(a, b, func(srcs, dsts []string) {
		inSrcs, srcArgs := InList(srcs)
		inDsts, dstArgs := InList(dsts)
		parts = append(parts, `SELECT run_id, source, dest, test, at, path, reached, changed, prev_path FROM run_path
			WHERE source IN (`+inSrcs+`) AND dest IN (`+inDsts+`) AND at >= ? AND changed = 1`)
		args = append(append(append(args, srcArgs...), dstArgs...), since.UTC())
	})
	return s.scanPaths(ctx, strings.Join(parts, "\nUNION ALL\n")+"\nORDER BY 5, 1", args...)
}

// scanPaths runs a query of run_path's columns, as Paths reads them.
func (s *Store) scanPaths(ctx context.Context, query string, args ...any) ([]Path, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, err
	}
	return scanPaths(rows)
}
