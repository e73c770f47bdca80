package taskstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// PairKey names one cell half of the grid: a test between two hosts in
// one direction.
type PairKey struct {
	Source, Dest, Test, Direction string
}

// PairStatus is the last run of a PairKey and what it measured: what the
// grid colours and /metrics exports. Nil figures were not measured (no
// loss in a TCP test, no RTT percentiles outside request-response tests
// and probes). RTTp50ms and RTTp99ms are rr's percentiles, or a probe's
// (ping's echo, tcp-connect's handshake), from their own columns.
type PairStatus struct {
	PairKey
	State       string
	Reason      string
	At          time.Time // when the last run ended, or was planned if it never started
	GoodputBps  *float64  // received, else sent
	LostPercent *float64
	RTTp50ms    *float64
	RTTp99ms    *float64
	MeanRTTms   *float64
	LastSuccess time.Time // zero: never finished
}

// doneStates are the states a run ends in.
var doneStates = []any{archive.StateFinished, archive.StateFailed, archive.StateMissed, archive.StateAborted}

// LastResults returns, for each (source, destination, test, direction)
// that has a run that ended, the last such run and the time of the last
// one that finished; by source, destination, test and direction.
func (s *Store) LastResults(ctx context.Context) ([]PairStatus, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`
		SELECT r.source, r.dest, r.test, r.direction, r.state, r.reason, r.planned, r.ended,
			m.received_bps, m.sent_bps, m.lost_percent, COALESCE(m.rr_p50_us, m.probe_p50_us), COALESCE(m.rr_p99_us, m.probe_p99_us), m.mean_rtt_ms,
			(SELECT MAX(f.ended) FROM sched_run f WHERE f.source = r.source AND f.dest = r.dest AND f.test = r.test
				AND f.direction = r.direction AND f.state = ?)
		FROM sched_run r LEFT JOIN run_summary m ON m.run_id = r.id
		WHERE r.state IN (?, ?, ?, ?) AND r.id = (
			SELECT l.id FROM sched_run l WHERE l.source = r.source AND l.dest = r.dest AND l.test = r.test
				AND l.direction = r.direction AND l.state IN (?, ?, ?, ?)
			ORDER BY l.planned DESC, l.id DESC LIMIT 1)
		ORDER BY r.source, r.dest, r.test, r.direction`),
		append(append([]any{archive.StateFinished}, doneStates...), doneStates...)...)
	if err != nil {
		return nil, err
	}
	return scanPairStatuses(rows, true)
}

// LastResultsFrom is LastResults for the pairs whose source is source
// and that one of its tasks schedules: the figures one daemon exports.
// It reads a few rows a pair: it starts from the source's tasks
// (sched_task_source) and finds each pair's last run as
// ScheduledLastResults does (newestRunOfPair), so that neither the rest
// of the mesh nor a pair's older runs are read. The last success is the
// end of the newest finished run by planned start.
func (s *Store) LastResultsFrom(ctx context.Context, source string) ([]PairStatus, error) {
	rows, err := s.db.QueryContext(ctx, s.q(s.lastResultsFromQuery()), lastResultsArgs(source)...)
	if err != nil {
		return nil, err
	}
	return scanPairStatuses(rows, true)
}

const (
	lastResultsFromColumns = `r.source, r.dest, r.test, r.direction, r.state, r.reason, r.planned, r.ended,
		m.received_bps, m.sent_bps, m.lost_percent, COALESCE(m.rr_p50_us, m.probe_p50_us), COALESCE(m.rr_p99_us, m.probe_p99_us), m.mean_rtt_ms`
	sourceTaskPairs  = `(SELECT DISTINCT source, dest, name, direction FROM sched_task WHERE source = ?) k`
	lastResultsOrder = `
	ORDER BY r.source, r.dest, r.test, r.direction`
)

// lastResultsFromQuery is LastResultsFrom's query on s's database.
func (s *Store) lastResultsFromQuery() string {
	return lastResultsQuery(lastResultsFromColumns, sourceTaskPairs, s.db.Postgres()) + lastResultsOrder
}

// PairHistory returns every run planned since that has ended, with
// what it measured, by planned start: a pair's history for the grid.
// LastSuccess is left zero.
func (s *Store) PairHistory(ctx context.Context, since time.Time) ([]PairStatus, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`
		SELECT r.source, r.dest, r.test, r.direction, r.state, r.reason, r.planned, r.ended,
			m.received_bps, m.sent_bps, m.lost_percent, COALESCE(m.rr_p50_us, m.probe_p50_us), COALESCE(m.rr_p99_us, m.probe_p99_us), m.mean_rtt_ms
		FROM sched_run r LEFT JOIN run_summary m ON m.run_id = r.id
		WHERE r.state IN (?, ?, ?, ?) AND r.planned >= ?
		ORDER BY r.planned, r.id`), append(append([]any{}, doneStates...), since.UTC())...)
	if err != nil {
		return nil, err
	}
	return scanPairStatuses(rows, false)
}

// fill sets p's figures from a row's columns: its instant (the run's end,
// else its planned start), its last success, its goodput (received, else
// sent) and its RTTs in ms.
func (p *PairStatus) fill(planned time.Time, ended sql.NullTime, lastOK any, recv, sent, p50us, p99us *float64) error {
	p.At = planned.UTC()
	if ended.Valid {
		p.At = ended.Time.UTC()
	}
	var err error
	if p.LastSuccess, err = anyTime(lastOK); err != nil {
		return err
	}
	p.GoodputBps = recv
	if p.GoodputBps == nil {
		p.GoodputBps = sent
	}
	p.RTTp50ms, p.RTTp99ms = usToMs(p50us), usToMs(p99us)
	return nil
}

// scanPairStatuses reads LastResults' and PairHistory's rows; withLast:
// the rows end in the time of the pair's last success.
func scanPairStatuses(rows *sql.Rows, withLast bool) ([]PairStatus, error) {
	defer rows.Close()
	var out []PairStatus
	for rows.Next() {
		var p PairStatus
		var planned time.Time
		var ended sql.NullTime
		var lastOK any // SQLite gives an aggregate's instant as text
		var recv, sent, p50, p99 *float64
		dest := []any{&p.Source, &p.Dest, &p.Test, &p.Direction, &p.State, &p.Reason, &planned, &ended,
			&recv, &sent, &p.LostPercent, &p50, &p99, &p.MeanRTTms}
		if withLast {
			dest = append(dest, &lastOK)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if err := p.fill(planned, ended, lastOK, recv, sent, p50, p99); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// sqliteTimeLayouts are the forms SQLite's driver writes instants in.
var sqliteTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999"}

// anyTime reads an instant that a driver gave as a time or as text.
func anyTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return x.UTC(), nil
	case []byte:
		return anyTime(string(x))
	case string:
		for _, l := range sqliteTimeLayouts {
			if t, err := time.Parse(l, x); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("instant %q: unknown form", x)
	}
	return time.Time{}, fmt.Errorf("instant of type %T", v)
}

func usToMs(v *float64) *float64 {
	if v == nil {
		return nil
	}
	ms := *v / 1000
	return &ms
}

// StateCounts counts the planned runs by state.
func (s *Store) StateCounts(ctx context.Context) (map[string]int, error) {
	return s.stateCounts(ctx, `SELECT state, COUNT(*) FROM sched_run GROUP BY state`)
}

// stateCounts reads (state, count) rows into a map.
func (s *Store) stateCounts(ctx context.Context, query string, args ...any) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// RunLag is one started run's planned and actual start.
type RunLag struct {
	RunID        string
	Source, Dest string
	Test         string
	Planned      time.Time
	ActualStart  time.Time
}

// Lag is actual start − planned start.
func (l RunLag) Lag() time.Duration { return l.ActualStart.Sub(l.Planned) }

// Lags returns the planned and actual starts of the runs that started
// since the given instant, by planned start.
func (s *Store) Lags(ctx context.Context, since time.Time) ([]RunLag, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, source, dest, test, planned, actual_start FROM sched_run
		WHERE actual_start IS NOT NULL AND planned >= ? ORDER BY planned, id`), since.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunLag
	for rows.Next() {
		var l RunLag
		if err := rows.Scan(&l.RunID, &l.Source, &l.Dest, &l.Test, &l.Planned, &l.ActualStart); err != nil {
			return nil, err
		}
		l.Planned, l.ActualStart = l.Planned.UTC(), l.ActualStart.UTC()
		out = append(out, l)
	}
	return out, rows.Err()
}
