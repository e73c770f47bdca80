package taskstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/testutil/race"
)

// planOf is the database's plan for query: EXPLAIN's lines on
// PostgreSQL, EXPLAIN QUERY PLAN's details on SQLite.
func planOf(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	var lines []string
	if s.db.Postgres() {
		rows, err := s.db.Query("EXPLAIN "+s.q(query), args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		return strings.Join(lines, "\n")
	}
	rows, err := s.db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}

// planUses fails unless plan reads table through index and never scans
// it whole.
func planUses(t *testing.T, what, plan, table, index string) {
	t.Helper()
	if !strings.Contains(plan, index) {
		t.Errorf("%s: the plan does not use %s:\n%s", what, index, plan)
	}
	for _, l := range strings.Split(plan, "\n") {
		// PostgreSQL: "Seq Scan on reservation"; SQLite: "SCAN reservation"
		// (a search through an index reads "SEARCH reservation USING ...").
		if strings.Contains(l, "Seq Scan on "+table) || strings.TrimSpace(l) == "SCAN "+table {
			t.Errorf("%s: the plan scans %s whole:\n%s", what, table, plan)
		}
	}
}

// A hundred hosts' reservations and planned runs, a thousand each
// (100,000 rows a table): the check of one reservation and a daemon's
// look at its own waiting runs go through an index on the resource (the
// source) and the window, not through the table.
func TestPlannerQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	skipLargeFill(t, "fills tables with 100,000 rows")
	const hosts, perHost = 100, 1000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each backend fills its own archive
			ctx := context.Background()
			s := open(t, dsn)
			fill(t, s.Store, hosts, perHost, t0)
			for _, stmt := range []string{"ANALYZE"} {
				if _, err := s.db.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			// host:7's last reservation starts at t0 + 999 min: a check
			// near the end of its history.
			from := t0.Add(990 * time.Minute)
			plan := planOf(t, s.Store, holderQuery, "host:7", "new-run", from.Add(10*time.Second), from)
			planUses(t, "reservation check", plan, "reservation", "reservation_resource_hi")

			q, args := schedRunsQuery(RunQuery{Source: "host:7", States: []string{archive.StateScheduled}, Until: t0.Add(perHost * time.Minute)})
			plan = planOf(t, s.Store, q, args...)
			planUses(t, "a daemon's waiting runs", plan, "sched_run", "sched_run_source_state")

			// And the check still finds its holder: host:7's run at 990 min.
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			var holder string
			var hi time.Time
			if err := tx.QueryRowContext(ctx, s.q(holderQuery), "host:7", "new-run", from.Add(10*time.Second), from).Scan(&holder, &hi); err != nil {
				t.Fatal(err)
			}
			if want := "r-7-990"; holder != want {
				t.Errorf("holder = %s, want %s", holder, want)
			}
		})
	}
}

// fill stores, for each of hosts hosts, perHost exclusive reservations
// of 30 s a minute apart and as many planned runs, the last tenth of
// them still scheduled, host by host. The rows are made by the database.
func fill(t *testing.T, s *Store, hosts, perHost int, t0 time.Time) {
	t.Helper()
	series := countTo("h", hosts) + ", " + countTo("m", perHost)
	at := func(seconds string) string { return instantSQL(s, t0, seconds) }
	for _, stmt := range []string{
		`WITH RECURSIVE ` + series + `
		INSERT INTO reservation (resource, lo, hi, run_id, class)
		SELECT 'host:' || h, ` + at("m * 60") + `, ` + at("m * 60 + 30") + `, 'r-' || h || '-' || m, 'exclusive' FROM h, m ORDER BY h, m`,
		`WITH RECURSIVE ` + series + `
		INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, state, updated)
		SELECT 'r-' || h || '-' || m, 't-' || h, m, 'host:' || h, 'host:' || ((h + 1) % ` + itoa(hosts) + `), 'tcp', 'up', 'exclusive',
			` + at("m * 60") + `, ` + at("m * 60 + 60") + `,
			CASE WHEN m >= ` + itoa(perHost*9/10) + ` THEN 'scheduled' ELSE 'finished' END, ` + at("0") + `
		FROM h, m ORDER BY h, m`,
	} {
		if _, err := s.db.ExecContext(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	// The instants are as the driver writes them: a query with host:7's
	// run's start as an argument finds its reservation.
	lo := t0.Add(990 * time.Minute)
	var n int
	if err := s.db.QueryRowContext(context.Background(), s.q(`SELECT count(*) FROM reservation WHERE resource = 'host:7' AND lo = ?`), lo).Scan(&n); err != nil || n != 1 {
		t.Fatalf("host:7's reservation at %v: %d rows (%v), want 1", lo, n, err)
	}
}

// skipLargeFill skips a test that fills tables with many rows under
// -short, and under the race detector, where SQLite's instrumented Go
// code takes a minute to store them (make test runs such tests in its
// pass without it).
func skipLargeFill(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	if race.Enabled {
		t.Skip(what + ": under the race detector SQLite takes a minute to store them; make test runs this in its pass without it")
	}
}

// countTo is a recursive common table expression that counts name from
// 0 to n−1, in either dialect.
func countTo(name string, n int) string {
	return name + `(` + name + `) AS (SELECT 0 UNION ALL SELECT ` + name + ` + 1 FROM ` + name + ` WHERE ` + name + ` + 1 < ` + itoa(n) + `)`
}

// instantSQL is an SQL expression for t0 plus a whole number of seconds,
// stored as the driver stores a time.Time argument: PostgreSQL's
// timestamptz, and SQLite's text form of a UTC instant with no fraction
// (t0 must be whole seconds in UTC).
func instantSQL(s *Store, t0 time.Time, seconds string) string {
	base := strconv.FormatInt(t0.Unix(), 10)
	if s.db.Postgres() {
		return `to_timestamp(` + base + ` + ` + seconds + `)`
	}
	return `strftime('%Y-%m-%d %H:%M:%S', ` + base + ` + ` + seconds + `, 'unixepoch') || '+00:00'`
}

func itoa(n int) string { return strconv.Itoa(n) }
