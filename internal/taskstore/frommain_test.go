package taskstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

// fromMain is the archive wireperf's main wrote at c906129, the last
// commit where archive.Store held the schedule's state too:
// testdata/mkarchive.go says how it was made.
const fromMain = "testdata/main-c906129.db"

// An archive written before the results and the schedule's state became
// two stores opens under the new code, migrates, and keeps every row:
// on SQLite the file main wrote, on PostgreSQL a database that today's
// migrations built, holding the same rows. Every table is compared row by
// row before and after opening, and the rows read back through both
// stores' APIs.
func TestArchiveFromMain(t *testing.T) {
	t.Parallel()
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := copyFixture(t)
			if name == "postgres" {
				buildLike(t, src, dsn)
			} else {
				dsn = src
			}
			before := dumpTables(t, dsn)
			for _, table := range []string{"campaign", "run", "run_axis", "run_summary", "run_interval", "host_state", "host_limits",
				"run_figure", "run_path", "sched_task", "sched_run", "reservation", "schema_version"} {
				if len(before[table]) == 0 {
					t.Fatalf("the fixture has no rows in %s to keep", table)
				}
			}
			s := open(t, dsn)
			checkFromMain(t, ctx, s)
			s.results.Close()
			after := dumpTables(t, dsn)
			for table, rows := range before {
				if table == "schema_version" { // migrations may add versions, never remove one
					for _, r := range rows {
						if !slices.Contains(after[table], r) {
							t.Errorf("schema_version lost %s", r)
						}
					}
					continue
				}
				if !slices.Equal(rows, after[table]) {
					t.Errorf("table %s changed on opening:\nbefore %q\nafter  %q", table, rows, after[table])
				}
			}
		})
	}
}

// checkFromMain reads the fixture's rows through the two stores
// (testdata/mkarchive.go wrote them).
func checkFromMain(t *testing.T, ctx context.Context, s both) {
	t.Helper()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	runs, err := s.List(ctx, archive.Filter{})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %d, %v", len(runs), err)
	}
	for _, r := range runs {
		got, err := s.Get(ctx, r.ID)
		if err != nil || len(got.Intervals) != 1 || len(got.Hosts) != 1 || len(got.Limits) != 1 || len(got.Axes) != 2 ||
			got.Summary.Figures[archive.FigureSndbufGranted] != 425984 || string(got.Document) != "{\"start\": {}}\n" {
			t.Fatalf("run %s: %+v %v", r.ID, got, err)
		}
	}
	if c, err := s.GetCampaign(ctx, "grid"); err != nil || c.ShuffleKey != 7 || c.Spec != "name: grid\n" {
		t.Fatalf("campaign: %+v %v", c, err)
	}
	if ps, err := s.Paths(ctx, archive.PathFilter{}); err != nil || len(ps) != 1 || !slices.Equal(ps[0].Hops, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("paths: %+v %v", ps, err)
	}
	tasks, err := s.Tasks(ctx, "")
	if err != nil || len(tasks) != 2 {
		t.Fatalf("tasks: %d %v", len(tasks), err)
	}
	for _, tk := range tasks {
		switch tk.Name {
		case "tput":
			if tk.Rotating() || !slices.Equal(tk.Resources, []string{"a/eth0", "b/eth0"}) || tk.Thresholds.GoodputRedBps != 100e6 ||
				!tk.Start.Equal(t0) || tk.Repeat != time.Minute || tk.Group != "all" {
				t.Errorf("task tput: %+v", tk)
			}
		case "rr":
			if len(tk.Dests) != 2 || tk.Dests[1].Addr != "c:5201" || tk.Dests[1].At != time.Minute || tk.MaxRuns != 100 ||
				!tk.Until.Equal(t0.Add(24*time.Hour)) {
				t.Errorf("task rr: %+v", tk)
			}
		default:
			t.Errorf("task %+v", tk)
		}
	}
	runsPlanned, err := s.SchedRuns(ctx, RunQuery{})
	if err != nil || len(runsPlanned) != 10 {
		t.Fatalf("planned runs: %d %v", len(runsPlanned), err)
	}
	counts, err := s.StateCounts(ctx)
	if err != nil || counts[archive.StateFinished] != 1 || counts[archive.StateMissed] != 1 || counts[archive.StateScheduled] != 8 {
		t.Fatalf("states: %v %v", counts, err)
	}
	rs, err := s.Reservations(ctx, t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil || len(rs) != 1 || rs[0].Resource != "a/eth0" || rs[0].RunID != runsPlanned[0].ID {
		t.Fatalf("reservations: %+v %v", rs, err)
	}
	// The grid's query joins the two stores' tables: tput's last run was
	// missed, after one that finished 9 s into its slot.
	last, err := s.LastResults(ctx)
	if err != nil || len(last) != 1 || last[0].Test != "tput" || last[0].State != archive.StateMissed ||
		!last[0].LastSuccess.Equal(t0.Add(9*time.Second)) {
		t.Fatalf("last results: %+v %v", last, err)
	}
}

// copyFixture copies the fixture into the test's directory, so that
// opening it doesn't change the checked-in file.
func copyFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fromMain)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "main.db")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildLike makes the PostgreSQL database dsn hold src's rows: its schema
// by today's migrations (opened and closed by archive.Open, as main
// leaves it), then every row of every table inserted as it is, into run
// partitions made as migration 6 makes them.
func buildLike(t *testing.T, src, dsn string) {
	t.Helper()
	ctx := context.Background()
	a, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	from := sqlOpen(t, "sqlite", "file:"+src+"?mode=ro&_time_format=sqlite")
	to := sqlOpen(t, "pgx", dsn)
	var months []time.Time
	rows, err := from.Query(`SELECT recorded FROM run`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		m := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
		if !slices.ContainsFunc(months, m.Equal) {
			months = append(months, m)
		}
	}
	rows.Close()
	for _, m := range months {
		if _, err := to.Exec(fmt.Sprintf(`CREATE TABLE IF NOT EXISTS run_%s PARTITION OF run FOR VALUES FROM ('%s') TO ('%s')`,
			m.Format("2006_01"), m.Format(time.RFC3339), m.AddDate(0, 1, 0).Format(time.RFC3339))); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range tableNames(t, from, false) {
		if table == "schema_version" {
			continue
		}
		rows, err := from.Query(`SELECT * FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		ph := make([]string, len(cols))
		for i := range ph {
			ph[i] = fmt.Sprintf("$%d", i+1)
		}
		ins := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(ph, ", ") + `)`
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if _, err := to.Exec(ins, vals...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
}

func sqlOpen(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// tableNames lists a database's tables (PostgreSQL: the public schema's,
// partitions as their parent).
func tableNames(t *testing.T, db *sql.DB, postgres bool) []string {
	t.Helper()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if postgres {
		q = `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// dumpTables reads every row of every table of the archive dsn, each as
// text (its non-NULL columns), sorted.
func dumpTables(t *testing.T, dsn string) map[string][]string {
	t.Helper()
	var db *sql.DB
	pg := archive.IsPostgres(dsn)
	if pg {
		db = sqlOpen(t, "pgx", dsn)
	} else {
		db = sqlOpen(t, "sqlite", "file:"+dsn+"?mode=ro&_time_format=sqlite")
	}
	out := map[string][]string{}
	for _, table := range tableNames(t, db, pg) {
		rows, err := db.Query(`SELECT * FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if v == nil {
					// A column a later migration added reads NULL in the
					// rows it found; leaving NULLs out compares the
					// values the rows held.
					continue
				}
				switch x := v.(type) {
				case time.Time:
					v = x.UTC().Format(time.RFC3339Nano)
				case []byte:
					v = string(x)
				}
				fmt.Fprintf(&b, "%s=%v ", cols[i], v)
			}
			out[table] = append(out[table], b.String())
		}
		rows.Close()
		slices.Sort(out[table])
	}
	return out
}
