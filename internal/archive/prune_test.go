package archive

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runAt is sampleRun started and recorded at t.
func runAt(id, campaign string, t time.Time) *Run {
	r := sampleRun(id, campaign, 0)
	r.Started, r.Ended, r.Recorded = t, t.Add(10*time.Second), t.Add(11*time.Second)
	return r
}

func countRows(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(s.q(query), args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Prune removes old runs with their rows beside them, keeps a kept
// campaign's and the young ones; a dry run counts the same and changes
// nothing; what a store beside the archive prunes is in the same
// transaction, and its failure leaves every run. (The schedule's past is
// taskstore's: its TestPrune.)
func TestPrune(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			for _, c := range []string{"old-study", "kept-study"} {
				if _, err := s.PutCampaign(ctx, Campaign{Name: c, Spec: "x", SpecFormat: "yaml"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.KeepCampaign(ctx, "kept-study", true); err != nil {
				t.Fatal(err)
			}
			if err := s.KeepCampaign(ctx, "no-such", true); !errors.Is(err, ErrNotFound) {
				t.Fatalf("keeping a campaign that is not there: %v, want ErrNotFound", err)
			}
			old := now.AddDate(0, 0, -500) // July 2025
			runs := []*Run{
				runAt("old-1", "old-study", old),
				runAt("old-2", "", old.Add(time.Hour)),
				runAt("kept-1", "kept-study", old.AddDate(0, -2, 0)), // a month of its own
				runAt("young-1", "old-study", now.AddDate(0, 0, -10)),
				runAt("edge-young", "", now.AddDate(0, 0, -399)),
			}
			for _, r := range runs {
				if err := s.PutRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}

			if _, err := s.Prune(ctx, PruneRequest{OlderThan: 23 * time.Hour, Now: now}); !errors.Is(err, ErrPruneTooYoung) {
				t.Fatalf("prune of 23h: %v, want ErrPruneTooYoung", err)
			}
			req := PruneRequest{OlderThan: 400 * 24 * time.Hour, Now: now, DryRun: true}
			var besideSaw []bool
			beside := func(_ context.Context, tx *sql.Tx, before time.Time, dryRun bool) error {
				if want := now.AddDate(0, 0, -400); !before.Equal(want) || tx == nil {
					t.Errorf("beside got the cut %s (tx %v), want %s", before, tx, want)
				}
				besideSaw = append(besideSaw, dryRun)
				return nil
			}
			dry, err := s.Prune(ctx, req, beside)
			if err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM run`); n != len(runs) {
				t.Fatalf("after the dry run %d runs, want all %d", n, len(runs))
			}
			req.DryRun = false
			failing := func(context.Context, *sql.Tx, time.Time, bool) error { return errors.New("beside failed") }
			if _, err := s.Prune(ctx, req, failing); err == nil || !strings.Contains(err.Error(), "beside failed") {
				t.Fatalf("prune with a failing store beside: %v", err)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM run`); n != len(runs) {
				t.Fatalf("a prune whose store beside failed left %d runs, want all %d", n, len(runs))
			}
			got, err := s.Prune(ctx, req, beside)
			if err != nil {
				t.Fatal(err)
			}
			if got.Runs != 2 || got.KeptRuns != 1 || !slices.Equal(besideSaw, []bool{true, false}) {
				t.Errorf("prune = %+v, beside called with dry runs %v; want 2 runs, 1 kept, beside once dry and once not", got, besideSaw)
			}
			if !slices.Equal(dry.Partitions, got.Partitions) || dry.Runs != got.Runs {
				t.Errorf("the dry run said %+v, the prune did %+v", dry, got)
			}
			if s.dialect == postgresDialect {
				// July 2025 held only runs that went; May 2025 holds a kept one.
				if want := []string{"run_2025_07"}; !slices.Equal(got.Partitions, want) {
					t.Errorf("partitions dropped %q, want %q", got.Partitions, want)
				}
			} else if len(got.Partitions) != 0 {
				t.Errorf("SQLite has no partitions, prune says %q", got.Partitions)
			}
			all, err := s.List(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range all {
				ids = append(ids, r.ID)
			}
			slices.Sort(ids)
			if want := []string{"edge-young", "kept-1", "young-1"}; !slices.Equal(ids, want) {
				t.Errorf("runs left %q, want %q", ids, want)
			}
			for _, table := range runChildTables {
				if table == "run_path" || table == "run_figure" {
					continue // sampleRun stores none
				}
				if n := countRows(t, s, `SELECT COUNT(*) FROM `+table+` WHERE run_id IN ('old-1', 'old-2')`); n != 0 {
					t.Errorf("%s keeps %d rows of pruned runs", table, n)
				}
				if n := countRows(t, s, `SELECT COUNT(*) FROM `+table+` WHERE run_id = 'kept-1'`); n == 0 {
					t.Errorf("%s lost the kept run's rows", table)
				}
			}
			// A run recorded in a month that was dropped gets it back.
			if err := s.PutRun(ctx, runAt("late", "", old)); err != nil {
				t.Fatal(err)
			}
			// Unkept, the kept run goes too.
			if err := s.KeepCampaign(ctx, "kept-study", false); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Prune(ctx, req); err != nil || got.Runs != 2 || got.KeptRuns != 0 {
				t.Errorf("second prune = %+v, %v; want the unkept run and the late one", got, err)
			}
		})
	}
}

// ParseAge reads days and durations, and nothing else.
func TestParseAge(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"400d": 400 * 24 * time.Hour, "1d": 24 * time.Hour, "36h": 36 * time.Hour, "90": 90 * time.Second} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-3d", "1.5d", "soon", "400x"} {
		if _, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) took it", in)
		}
	}
}

// On PostgreSQL a run lands in its month's partition, and is found by
// ID and in lists as before.
func TestRunPartitionedByMonth(t *testing.T) {
	t.Parallel()
	dsn, ok := backends(t)["postgres"]
	if !ok {
		t.Skip("PostgreSQL only: " + "WIREPERF_TEST_PG_DSN not set")
	}
	ctx := context.Background()
	s := open(t, dsn)
	for id, at := range map[string]time.Time{
		"march":    time.Date(2025, 3, 31, 23, 59, 0, 0, time.UTC),
		"december": time.Date(2026, 12, 1, 0, 0, 30, 0, time.UTC),
	} {
		if err := s.PutRun(ctx, runAt(id, "", at)); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]string{"march": "run_2025_03", "december": "run_2026_12"} {
		var part string
		if err := s.db.QueryRow(`SELECT tableoid::regclass::text FROM run WHERE id = $1`, id).Scan(&part); err != nil {
			t.Fatal(err)
		}
		if part != want {
			t.Errorf("run %s is in %s, want %s", id, part, want)
		}
		r, err := s.Get(ctx, id)
		if err != nil || r.ID != id || len(r.Intervals) != 2 {
			t.Errorf("Get(%s) = %+v, %v", id, r, err)
		}
	}
	// A failed attempt stored again replaces the first, even from
	// another month.
	retry := runAt("retry", "", time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC))
	retry.State = StateFailed
	if err := s.PutRun(ctx, retry); err != nil {
		t.Fatal(err)
	}
	again := runAt("retry", "", time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC))
	if err := s.PutRun(ctx, again); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM run WHERE id = 'retry'`); n != 1 || again.Attempts != 2 {
		t.Errorf("retry stored %d times, attempts %d; want once, 2", n, again.Attempts)
	}
	if err := s.EnsureRunPartitions(ctx, time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	parts, err := s.runPartitions(ctx, s.db)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parts {
		names = append(names, p.name)
	}
	if want := []string{"run_2025_03", "run_2026_11", "run_2026_12", "run_2027_01", "run_2027_02", "run_2027_03"}; !slices.Equal(names, want) {
		t.Errorf("partitions %q, want %q", names, want)
	}
}

// An archive of schema 5 with runs becomes partitioned, every row kept.
func TestMigrationPartitionsRuns(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openAtSchema(t, dsn, 5)
			if _, err := s.PutCampaign(ctx, Campaign{Name: "c", Spec: "x", SpecFormat: "yaml"}); err != nil {
				t.Fatal(err)
			}
			months := []time.Time{
				time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC),
				time.Date(2025, 1, 31, 23, 59, 59, 0, time.UTC),
				time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
			}
			// Stored as wireperf 5 stored them: one table.
			for i, at := range months {
				tx, err := s.db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.insertRun(ctx, tx, runAt("m"+strconv.Itoa(i), "c", at)); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			before := map[string]int{}
			for _, table := range append([]string{"run"}, runChildTables...) {
				before[table] = countRows(t, s, `SELECT COUNT(*) FROM `+table)
			}
			s.Close()

			s = open(t, dsn)
			for table, n := range before {
				if got := countRows(t, s, `SELECT COUNT(*) FROM `+table); got != n {
					t.Errorf("%s: %d rows after the migration, %d before", table, got, n)
				}
			}
			for i := range months {
				r, err := s.Get(ctx, "m"+strconv.Itoa(i))
				if err != nil || r.Campaign != "c" || !r.Started.Equal(months[i]) || len(r.Intervals) != 2 {
					t.Errorf("run m%d after the migration: %+v, %v", i, r, err)
				}
			}
			if s.dialect != postgresDialect {
				return
			}
			var part string
			if err := s.db.QueryRow(`SELECT tableoid::regclass::text FROM run WHERE id = 'm1'`).Scan(&part); err != nil || part != "run_2025_02" {
				t.Errorf("run m1 (recorded 1 February) in %q, %v; want run_2025_02", part, err)
			}
			var partitioned bool
			if err := s.db.QueryRow(`SELECT relkind = 'p' FROM pg_class WHERE relname = 'run'`).Scan(&partitioned); err != nil || !partitioned {
				t.Errorf("run is not partitioned (%v)", err)
			}
		})
	}
}
