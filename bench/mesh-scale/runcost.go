package main

import (
	"context"
	"regexp"
	"sort"
)

// runCost is what the database did for each run of the schedule, in
// its steady state: from the schedule's start (the daemons opened, their
// schemas and first plans done) to the end of its last runs.
type runCost struct {
	// Transactions is PostgreSQL's committed and rolled-back
	// transactions of the harness's database, per finished run.
	Transactions float64 `json:"transactions_per_run"`
	// Statements are the statements per finished run by the part of
	// the daemon that ran them, from pg_stat_statements; nil where the
	// cluster doesn't load it (shared_preload_libraries).
	Statements []sourceCost `json:"statements_per_run,omitempty"`
	// Explicit is the transactions a client began (BEGIN) per run; the
	// rest are single statements, each its own transaction.
	Explicit float64 `json:"explicit_transactions_per_run,omitempty"`
	// Connections is the connections opened to the database per
	// finished run (pg_stat_database's sessions, PostgreSQL 14 on), -1
	// where unknown. Each new connection costs transactions that no
	// statement counter sees: its start, pgx's ping on its first reuse,
	// and a description of every statement it runs anew.
	Connections float64 `json:"connections_opened_per_run"`
	Runs        int     `json:"finished_runs"`
}

type sourceCost struct {
	Source string  `json:"source"`
	PerRun float64 `json:"per_run"`
}

// statementSources name the part of the daemon a statement comes from,
// by its text: River's statements carry their name in a comment, the
// daemon's touch the schedule's or the archive's tables. The first that
// matches names it.
var statementSources = []struct {
	source string
	re     *regexp.Regexp
}{
	{"transaction begin/commit", regexp.MustCompile(`(?i)^\s*(begin|commit|rollback)\b`)},
	{"River: fetching jobs", regexp.MustCompile(`name: JobGetAvailable\b`)},
	{"River: inserting jobs", regexp.MustCompile(`name: JobInsert`)},
	{"River: completing jobs", regexp.MustCompile(`name: JobSetState`)},
	{"River: maintenance and polls", regexp.MustCompile(`-- name: `)},
	{"planning", regexp.MustCompile(`(?is)(FROM sched_task|INSERT INTO sched_run|FROM sched_run\s+WHERE source)`)},
	{"a run's start", regexp.MustCompile(`(?is)(INSERT INTO reservation|SET state = \$1, reason = \$2, updated = \$3, actual_start|FROM reservation\s+WHERE resource)`)},
	{"leases", regexp.MustCompile(`(?is)UPDATE reservation SET hi = \$1 WHERE`)},
	{"a run's result", regexp.MustCompile(`(?is)(INTO run\b|INTO run_|INTO host_limits|INTO interval|INTO path|FROM run WHERE id|hashtextextended|UPDATE reservation SET hi = CASE|UPDATE sched_run SET state)`)},
}

// sourceOf names a statement's source, "other" when none matches.
func sourceOf(query string) string {
	for _, s := range statementSources {
		if s.re.MatchString(query) {
			return s.source
		}
	}
	return "other"
}

// statementCounts reads pg_stat_statements' calls of the database's
// statements by text; ok false when the extension can't be had.
func (s *pgSampler) statementCounts(ctx context.Context) (map[string]int64, bool) {
	if _, err := s.conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return nil, false
	}
	rows, err := s.conn.Query(ctx, `SELECT query, calls FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if err != nil {
		return nil, false
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var q string
		var n int64
		if err := rows.Scan(&q, &n); err != nil {
			return nil, false
		}
		out[q] += n
	}
	return out, rows.Err() == nil
}

// markSteady takes the figures the steady state's cost counts from.
func (s *pgSampler) markSteady(ctx context.Context) error {
	x, err := s.xacts(ctx)
	if err != nil {
		return err
	}
	s.steadyXacts = x
	s.steadySessions, s.sessionsOK = s.sessions(ctx)
	s.steadyStatements, s.statementsOK = s.statementCounts(ctx)
	return nil
}

// sessions is the connections opened to the database so far; ok false
// before PostgreSQL 14.
func (s *pgSampler) sessions(ctx context.Context) (n int64, ok bool) {
	err := s.conn.QueryRow(ctx, `SELECT sessions FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err == nil
}

// cost is the steady state's cost per run, runs having finished since
// markSteady.
func (s *pgSampler) cost(ctx context.Context, runs int) (runCost, error) {
	c := runCost{Runs: runs, Connections: -1}
	if runs == 0 {
		return c, nil
	}
	x, err := s.xacts(ctx)
	if err != nil {
		return c, err
	}
	c.Transactions = float64(x-s.steadyXacts) / float64(runs)
	if n, ok := s.sessions(ctx); ok && s.sessionsOK {
		c.Connections = float64(n-s.steadySessions) / float64(runs)
	}
	if !s.statementsOK {
		return c, nil
	}
	now, ok := s.statementCounts(ctx)
	if !ok {
		return c, nil
	}
	bySource := map[string]int64{}
	var begins int64
	for q, n := range now {
		d := n - s.steadyStatements[q]
		if d <= 0 || isSampler(q) {
			continue
		}
		src := sourceOf(q)
		bySource[src] += d
		if src == "transaction begin/commit" && beginRE.MatchString(q) {
			begins += d
		}
	}
	c.Explicit = float64(begins) / float64(runs)
	for src, n := range bySource {
		c.Statements = append(c.Statements, sourceCost{Source: src, PerRun: float64(n) / float64(runs)})
	}
	sort.Slice(c.Statements, func(i, j int) bool { return c.Statements[i].PerRun > c.Statements[j].PerRun })
	return c, nil
}

var (
	beginRE   = regexp.MustCompile(`(?i)^\s*begin\b`)
	samplerRE = regexp.MustCompile(`pg_stat_|pg_backend_pid|pg_database|max_connections`)
)

// isSampler says the statement is the harness's own watching.
func isSampler(q string) bool { return samplerRE.MatchString(q) }
