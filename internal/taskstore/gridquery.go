package taskstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// The grid's and /metrics' queries at scale: each reads what one request
// shows, bounded by the mesh's tasks, the runs changed since the last
// look, a block's hosts or one source, never by the archive's history.

// GridRun is a pair's run as the grid's cache of last results keeps it:
// its status, and what orders it among the pair's runs (planned start,
// then ID, as LastResults orders them) and among changes (Updated).
type GridRun struct {
	PairStatus
	ID      string
	Planned time.Time
	Updated time.Time
}

// gridRunColumns are a GridRun's columns from sched_run r and run_summary m.
const gridRunColumns = `r.id, r.planned, r.updated, r.source, r.dest, r.test, r.direction, r.state, r.reason, r.ended,
	m.received_bps, m.sent_bps, m.lost_percent, COALESCE(m.rr_p50_us, m.probe_p50_us), COALESCE(m.rr_p99_us, m.probe_p99_us), m.mean_rtt_ms`

// ScheduledLastResults is LastResultsFrom for every source: each pair a
// task schedules, its last run that ended. It reads a few rows a pair
// (newestRunOfPair's walks of sched_run_pair from the pair's newest
// run backwards), not the runs' history: the same rows whether the
// archive holds a day or a year. LastSuccess is the end of the pair's
// newest finished run by planned start.
func (s *Store) ScheduledLastResults(ctx context.Context) ([]GridRun, error) {
	rows, err := s.db.QueryContext(ctx, s.q(s.scheduledLastResultsQuery()), lastResultsArgs()...)
	if err != nil {
		return nil, err
	}
	return scanGridRuns(rows, true)
}

// lastResultsArgs are a lastResultsQuery's arguments, in the text's
// order: the last success's state (twice: newestRunOfPair), those of
// its pairs' relation, then the states a run ends in (twice).
func lastResultsArgs(pairArgs ...any) []any {
	args := []any{archive.StateFinished, archive.StateFinished}
	args = append(args, pairArgs...)
	return append(append(args, doneStates...), doneStates...)
}

// scheduledTaskPairs are the pairs the tasks schedule, each once.
const scheduledTaskPairs = `(SELECT DISTINCT source, dest, name, direction FROM sched_task) k`

// scheduledLastResultsQuery is ScheduledLastResults' query on s's
// database (they differ in newestRunJoin).
func (s *Store) scheduledLastResultsQuery() string {
	return lastResultsQuery(gridRunColumns, scheduledTaskPairs, s.db.Postgres())
}

// lastResultsQuery selects columns of each pair of pairs (a relation k
// of source, dest, name, direction), its newest run that ended (r), the
// run's summary (m), and last the end of its newest finished run.
func lastResultsQuery(columns, pairs string, postgres bool) string {
	return `
	SELECT ` + columns + `,
		(SELECT f.ended ` + newestRunOfPair("f", "= ?") + `)
	FROM ` + pairs + `
	` + newestRunJoin(postgres) + `
	LEFT JOIN run_summary m ON m.run_id = r.id`
}

// newestRunJoin joins each pair k to its newest run that ended, as r.
// On PostgreSQL it is a LATERAL subquery, run once a pair: written as a
// join on r.id = (the newest run's ID), PostgreSQL hashed the whole of
// sched_run to join it (400,887 rows read outside an index for 4,000
// pairs of a 96,000-run archive). SQLite, which has no LATERAL, looks
// the ID up in its primary key once a pair.
func newestRunJoin(postgres bool) string {
	const done = "IN (?, ?, ?, ?)"
	if postgres {
		return `CROSS JOIN LATERAL (SELECT r.* ` + newestRunOfPair("r", done) + `) r`
	}
	return `JOIN sched_run r ON r.id = (SELECT l.id ` + newestRunOfPair("l", done) + `)`
}

// newestRunOfPair is the FROM ... LIMIT 1 of a subquery that finds, as
// alias, pair k's newest run whose state is states (an SQL condition
// with its placeholders, which it uses twice), by planned start then ID
// as LastResults orders them. It is two lookups of sched_run_pair that
// stop at that run whatever the pair's history: a walk back in the
// index's own order (planned, descending) to the newest planned start
// of such a run, then the runs planned at that instant (one, unless
// two tasks share a pair and an instant) for the greatest ID. For one
// lookup ordered by planned and ID, which the index (without the ID)
// cannot give in order, PostgreSQL read and sorted all the pair's runs
// (1,940,002 rows for 4,000 pairs of 242 runs). The walk reads the
// pair's runs planned after it (those not ended yet, and for the last
// success the failures since it).
func newestRunOfPair(alias, states string) string {
	pairOf := func(a string) string {
		return a + `.source = k.source AND ` + a + `.dest = k.dest AND ` + a + `.test = k.name AND ` + a + `.direction = k.direction AND ` + a + `.state ` + states
	}
	p := alias + "p"
	return `FROM sched_run ` + alias + ` WHERE ` + pairOf(alias) + ` AND ` + alias + `.planned = (
			SELECT ` + p + `.planned FROM sched_run ` + p + ` WHERE ` + pairOf(p) + ` ORDER BY ` + p + `.planned DESC LIMIT 1)
		ORDER BY ` + alias + `.id DESC LIMIT 1`
}

// ResultsUpdatedSince returns the runs that ended and were last updated
// at or after since, by update: what changed in the grid since it last
// looked. It reads those runs only, through sched_run_updated.
// LastSuccess is the run's end when it finished, else zero.
func (s *Store) ResultsUpdatedSince(ctx context.Context, since time.Time) ([]GridRun, error) {
	rows, err := s.db.QueryContext(ctx, s.q(resultsUpdatedSinceQuery), append([]any{since.UTC()}, doneStates...)...)
	if err != nil {
		return nil, err
	}
	runs, err := scanGridRuns(rows, false)
	for i := range runs {
		if runs[i].State == archive.StateFinished {
			runs[i].LastSuccess = runs[i].At
		}
	}
	return runs, err
}

const resultsUpdatedSinceQuery = `
	SELECT ` + gridRunColumns + `
	FROM sched_run r LEFT JOIN run_summary m ON m.run_id = r.id
	WHERE r.updated >= ? AND r.state IN (?, ?, ?, ?)
	ORDER BY r.updated, r.id`

// BlockHistory returns the runs of test planned since that ended
// between a host of a and a host of b, either way: the histories of one
// block of the grid. It reads the block's pairs' runs in the window
// through sched_run_pair, whatever else the archive holds.
func (s *Store) BlockHistory(ctx context.Context, a, b []string, test string, since time.Time) ([]PairStatus, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, nil
	}
	query, args := blockHistoryQuery(a, b, test, since)
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, err
	}
	runs, err := scanGridRuns(rows, false)
	out := make([]PairStatus, len(runs))
	for i, r := range runs {
		out[i] = r.PairStatus
	}
	return out, err
}

// blockHistoryQuery is BlockHistory's query: one SELECT per way between
// the groups (one when they are the same), each naming every column of
// sched_run_pair so that the planned range is searched in the index.
func blockHistoryQuery(a, b []string, test string, since time.Time) (string, []any) {
	var parts []string
	var args []any
	archive.EitherWay(a, b, func(srcs, dsts []string) {
		inSrcs, srcArgs := archive.InList(srcs)
		inDsts, dstArgs := archive.InList(dsts)
		parts = append(parts, `SELECT `+gridRunColumns+`
			FROM sched_run r LEFT JOIN run_summary m ON m.run_id = r.id
			WHERE r.source IN (`+inSrcs+`) AND r.dest IN (`+inDsts+`)
				AND r.test = ? AND r.direction IN (?, ?, ?) AND r.planned >= ? AND r.state IN (?, ?, ?, ?)`)
		args = append(append(append(args, srcArgs...), dstArgs...), test, "forward", "reverse", "bidir", since.UTC())
		args = append(args, doneStates...)
	})
	return strings.Join(parts, "\nUNION ALL\n") + "\nORDER BY 2, 1", args
}

// StateCountsFromPlanned counts source's runs planned in [from, to) by
// state; a zero from or to leaves that end open. Naming every state lets
// both databases read sched_run_source_state as one range of planned
// per state, so a recent window costs its own runs, not the history's.
func (s *Store) StateCountsFromPlanned(ctx context.Context, source string, from, to time.Time) (map[string]int, error) {
	q, args := stateCountsFromPlannedQuery(source, from, to)
	return s.stateCounts(ctx, q, args...)
}

// runStates are every state a run can be in.
var runStates = []any{archive.StateScheduled, archive.StateRunning, archive.StateFinished, archive.StateFailed,
	archive.StateMissed, archive.StateAborted}

func stateCountsFromPlannedQuery(source string, from, to time.Time) (string, []any) {
	q := `SELECT state, COUNT(*) FROM sched_run WHERE source = ? AND state IN (?, ?, ?, ?, ?, ?)`
	args := append([]any{source}, runStates...)
	if !from.IsZero() {
		q += ` AND planned >= ?`
		args = append(args, from.UTC())
	}
	if !to.IsZero() {
		q += ` AND planned < ?`
		args = append(args, to.UTC())
	}
	return q + ` GROUP BY state`, args
}

// scanGridRuns reads gridRunColumns, and with withLast the end of the
// pair's last success after them.
func scanGridRuns(rows *sql.Rows, withLast bool) ([]GridRun, error) {
	defer rows.Close()
	var out []GridRun
	for rows.Next() {
		var g GridRun
		p := &g.PairStatus
		var ended sql.NullTime
		var lastOK any // SQLite may give a subquery's instant as text
		var recv, sent, p50, p99 *float64
		dest := []any{&g.ID, &g.Planned, &g.Updated, &p.Source, &p.Dest, &p.Test, &p.Direction, &p.State, &p.Reason, &ended,
			&recv, &sent, &p.LostPercent, &p50, &p99, &p.MeanRTTms}
		if withLast {
			dest = append(dest, &lastOK)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		g.Planned, g.Updated = g.Planned.UTC(), g.Updated.UTC()
		if err := p.fill(g.Planned, ended, lastOK, recv, sent, p50, p99); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
