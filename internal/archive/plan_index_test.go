package archive

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// planOf is the database's plan for query: EXPLAIN's lines on
// PostgreSQL, EXPLAIN QUERY PLAN's details on SQLite.
func planOf(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	var lines []string
	if s.dialect == postgresDialect {
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
	if testing.Short() {
		t.Skip("fills tables with 100,000 rows")
	}
	const hosts, perHost = 100, 1000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each backend fills its own archive
			ctx := context.Background()
			s := open(t, dsn)
			fill(t, s, hosts, perHost, t0)
			for _, stmt := range []string{"ANALYZE"} {
				if _, err := s.db.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			// host:7's last reservation starts at t0 + 999 min: a check
			// near the end of its history.
			from := t0.Add(990 * time.Minute)
			plan := planOf(t, s, holderQuery, "host:7", "new-run", from.Add(10*time.Second), from)
			planUses(t, "reservation check", plan, "reservation", "reservation_resource_hi")

			q, args := schedRunsQuery(RunQuery{Source: "host:7", States: []string{StateScheduled}, Until: t0.Add(perHost * time.Minute)})
			plan = planOf(t, s, q, args...)
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
// them still scheduled.
func fill(t *testing.T, s *Store, hosts, perHost int, t0 time.Time) {
	t.Helper()
	ctx := context.Background()
	if s.dialect == postgresDialect {
		for _, stmt := range []string{
			`INSERT INTO reservation (resource, lo, hi, run_id, class)
			SELECT 'host:' || h, $1::timestamptz + m * interval '1 minute', $1::timestamptz + m * interval '1 minute' + interval '30 seconds',
				'r-' || h || '-' || m, 'exclusive'
			FROM generate_series(0, $2 - 1) h, generate_series(0, $3 - 1) m`,
			`INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, state, updated)
			SELECT 'r-' || h || '-' || m, 't-' || h, m, 'host:' || h, 'host:' || ((h + 1) % $2), 'tcp', 'up', 'exclusive',
				$1::timestamptz + m * interval '1 minute', $1::timestamptz + m * interval '1 minute' + interval '1 minute',
				CASE WHEN m >= $3 * 9 / 10 THEN 'scheduled' ELSE 'finished' END, $1::timestamptz
			FROM generate_series(0, $2 - 1) h, generate_series(0, $3 - 1) m`,
		} {
			if _, err := s.db.ExecContext(ctx, stmt, t0, hosts, perHost); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	res, err := tx.PrepareContext(ctx, `INSERT INTO reservation (resource, lo, hi, run_id, class) VALUES (?, ?, ?, ?, 'exclusive')`)
	if err != nil {
		t.Fatal(err)
	}
	run, err := tx.PrepareContext(ctx, `INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, state, updated)
		VALUES (?, ?, ?, ?, ?, 'tcp', 'up', 'exclusive', ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	for h := range hosts {
		host, dest := "host:"+itoa(h), "host:"+itoa((h+1)%hosts)
		for m := range perHost {
			lo := t0.Add(time.Duration(m) * time.Minute)
			id := "r-" + itoa(h) + "-" + itoa(m)
			if _, err := res.ExecContext(ctx, host, lo, lo.Add(30*time.Second), id); err != nil {
				t.Fatal(err)
			}
			state := StateFinished
			if m >= perHost*9/10 {
				state = StateScheduled
			}
			if _, err := run.ExecContext(ctx, id, "t-"+itoa(h), m, host, dest, lo, lo.Add(time.Minute), state, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
