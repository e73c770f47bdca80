package taskstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// A full mesh of 20 hosts with 200 runs a pair, a minute apart (76,000
// runs): the grid's queries read what one request shows, through an
// index, and return exactly that: a block's pairs in the history window,
// the runs changed since a time, one source's counts, each scheduled
// pair's last run.
func TestGridQueriesReadWhatTheyShow(t *testing.T) {
	skipLargeFill(t, "fills sched_run with 76,000 rows")
	const hosts, perPair = 20, 200
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			fillMesh(t, s.Store, hosts, perPair, t0)
			if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
				t.Fatal(err)
			}
			a := []string{"h00", "h01", "h02", "h03", "h04"}
			b := []string{"h05", "h06", "h07", "h08", "h09"}
			since := t0.Add((perPair - 30) * time.Minute) // the last 30 runs of each pair

			q, args := blockHistoryQuery(a, b, "tcp", since)
			planUses(t, "a block's histories", planOf(t, s.Store, q, args...), "sched_run", "sched_run_pair")
			hist, err := s.BlockHistory(ctx, a, b, "tcp", since)
			if err != nil {
				t.Fatal(err)
			}
			if want := 5 * 5 * 2 * 30; len(hist) != want {
				t.Errorf("block history: %d runs, want %d (25 pairs each way, 30 runs each)", len(hist), want)
			}
			inBlock := func(x, y string) bool { return contains(a, x) && contains(b, y) || contains(b, x) && contains(a, y) }
			for _, p := range hist {
				if !inBlock(p.Source, p.Dest) || p.At.Before(since) {
					t.Fatalf("block history has %s → %s at %s, outside the block or window", p.Source, p.Dest, p.At)
				}
			}
			same, err := s.BlockHistory(ctx, a, a, "tcp", since)
			if err != nil {
				t.Fatal(err)
			}
			if want := 5 * 4 * 30; len(same) != want {
				t.Errorf("a group's own block: %d runs, want %d (20 ordered pairs, each once)", len(same), want)
			}

			changedSince := t0.Add((perPair - 1) * time.Minute) // the last two runs' updates, a minute after each is planned
			planUses(t, "runs updated since", planOf(t, s.Store, resultsUpdatedSinceQuery, append([]any{changedSince}, doneStates...)...), "sched_run", "sched_run_updated")
			changed, err := s.ResultsUpdatedSince(ctx, changedSince)
			if err != nil {
				t.Fatal(err)
			}
			if want := hosts * (hosts - 1) * 2; len(changed) != want {
				t.Errorf("runs updated since: %d, want %d (each pair's last two)", len(changed), want)
			}
			for _, r := range changed {
				if r.Updated.Before(changedSince) {
					t.Fatalf("run %s updated %s, before %s", r.ID, r.Updated, changedSince)
				}
			}

			aq, aargs := stateCountsFromPlannedQuery("h03", time.Time{}, time.Time{})
			planUses(t, "one source's run counts", planOf(t, s.Store, aq, aargs...), "sched_run", "sched_run_source_state")
			counts, err := s.StateCountsFromPlanned(ctx, "h03", time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if counts[archive.StateFinished] != (hosts-1)*(perPair-1) || counts[archive.StateFailed] != hosts-1 {
				t.Errorf("h03's runs by state = %v, want %d finished and %d failed", counts, (hosts-1)*(perPair-1), hosts-1)
			}

			split := t0.Add((perPair - 1) * time.Minute) // each pair's last run, the failed one, is planned here
			cq, cargs := stateCountsFromPlannedQuery("h03", split, time.Time{})
			planUses(t, "one source's recent run counts", planOf(t, s.Store, cq, cargs...), "sched_run", "sched_run_source_state")
			before, err := s.StateCountsFromPlanned(ctx, "h03", time.Time{}, split)
			if err != nil {
				t.Fatal(err)
			}
			after, err := s.StateCountsFromPlanned(ctx, "h03", split, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if before[archive.StateFinished] != (hosts-1)*(perPair-1) || before[archive.StateFailed] != 0 ||
				after[archive.StateFailed] != hosts-1 || after[archive.StateFinished] != 0 {
				t.Errorf("h03's runs split at %s: before %v, after %v; want the finished before and the failed after", split, before, after)
			}
			for st, n := range counts {
				if before[st]+after[st] != n {
					t.Errorf("h03's %s runs: %d before + %d after the split, %d in all", st, before[st], after[st], n)
				}
			}

			planUses(t, "each scheduled pair's last run", planOf(t, s.Store, s.scheduledLastResultsQuery(), lastResultsArgs()...),
				"sched_run", "sched_run_pair")
			last, err := s.ScheduledLastResults(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(last) != 2 {
				t.Fatalf("scheduled last results: %d, want the 2 pairs the tasks name", len(last))
			}
			lastPlanned := t0.Add((perPair - 1) * time.Minute)
			for _, r := range last {
				if r.Source != "h00" || r.State != archive.StateFailed || !r.Planned.Equal(lastPlanned) {
					t.Errorf("last of %s → %s: %s planned %s, want failed, planned %s", r.Source, r.Dest, r.State, r.Planned, lastPlanned)
				}
				if want := lastPlanned.Add(-30 * time.Second); !r.LastSuccess.Equal(want) {
					t.Errorf("last success of %s → %s = %s, want the run before's end %s", r.Source, r.Dest, r.LastSuccess, want)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fillMesh stores perPair runs of test tcp for every ordered pair of
// hosts hosts (h00, h01, …), planned a minute apart from t0, each ended
// 30 s and updated a minute after its planned start; each pair's last
// run failed. Two tasks schedule h00 → h01 and h00 → h02.
func fillMesh(t *testing.T, s *Store, hosts, perPair int, t0 time.Time) {
	t.Helper()
	ctx := context.Background()
	// The rows are made by the database, pair by pair.
	name := func(col string) string { return `'h' || (` + col + ` / 10) || (` + col + ` % 10)` }
	at := func(seconds string) string { return instantSQL(s, t0, seconds) }
	task := `'t-' || ` + name("src") + ` || '-' || ` + name("dst")
	if _, err := s.db.ExecContext(ctx, `WITH RECURSIVE `+countTo("src", hosts)+`, `+countTo("dst", hosts)+`, `+countTo("m", perPair)+`
		INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, ended, state, updated)
		SELECT `+task+` || '-' || m, `+task+`, m, `+name("src")+`, `+name("dst")+`, 'tcp', 'forward', 'exclusive',
			`+at("m * 60")+`, `+at("m * 60 + 60")+`, `+at("m * 60 + 30")+`,
			CASE WHEN m = `+itoa(perPair-1)+` THEN 'failed' ELSE 'finished' END, `+at("m * 60 + 60")+`
		FROM src, dst, m WHERE src <> dst ORDER BY src, dst, m`); err != nil { // pair by pair, as before
		t.Fatal(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, dst := range []string{"h01", "h02"} {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO sched_task (id, name, source, dest, args, direction, class, duration_ms, start_at, created, updated)
			VALUES (?, 'tcp', 'h00', ?, 'tcp', 'forward', 'exclusive', 10000, ?, ?, ?)`), "t-h00-"+dst, dst, t0, t0, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// A probe's run (ping, tcp-connect) keeps its percentiles in the
// probes' own columns; every query the grid and /metrics read gives
// them as the pair's RTTs, as it gives an rr run's.
func TestGridQueriesReadProbePercentiles(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			tk := schedTask("echo", "a", "router")
			tk.Args = []string{"ping", "--count", "5"}
			if _, err := s.PutTask(ctx, tk, s0); err != nil {
				t.Fatal(err)
			}
			at, _ := tk.At(0)
			r := NewSchedRun(tk, at)
			if _, err := s.PlanRuns(ctx, []*SchedRun{r}, s0); err != nil {
				t.Fatal(err)
			}
			s.Transition(ctx, r.ID, []string{archive.StateScheduled}, archive.StateFinished, "", s0.Add(time.Second), s0.Add(6*time.Second), s0)
			rec := sampleRun(r.ID, "", 0)
			rec.Summary = archive.Summary{ProbeP50us: f64(1200), ProbeP99us: f64(4800), LostPercent: f64(0)}
			if err := s.PutRun(ctx, rec); err != nil {
				t.Fatal(err)
			}
			check := func(what string, got []PairStatus, err error) {
				t.Helper()
				if err != nil || len(got) != 1 || got[0].RTTp50ms == nil || *got[0].RTTp50ms != 1.2 || got[0].RTTp99ms == nil || *got[0].RTTp99ms != 4.8 {
					t.Errorf("%s: %+v, %v; want p50 1.2 ms and p99 4.8 ms", what, got, err)
				}
			}
			last, err := s.LastResults(ctx)
			check("last results", last, err)
			from, err := s.LastResultsFrom(ctx, "a")
			check("last results from a", from, err)
			hist, err := s.PairHistory(ctx, s0.Add(-time.Hour))
			check("pair history", hist, err)
			block, err := s.BlockHistory(ctx, []string{"a"}, []string{"router"}, "echo", s0.Add(-time.Hour))
			check("block history", block, err)
			grid, err := s.ScheduledLastResults(ctx)
			var statuses []PairStatus
			for _, g := range grid {
				statuses = append(statuses, g.PairStatus)
			}
			check("scheduled last results", statuses, err)
		})
	}
}

// Each pair's last run is found by walking sched_run_pair back from the
// pair's newest run, not by reading the runs' history: 992 scheduled
// pairs of 27 runs each (26,784), one pair with runs planned ahead that
// have not ended and one whose newest instant holds two runs. On
// PostgreSQL the rows the query reads from sched_run (its own counters,
// within the transaction) are at most 10 a pair (5 here; the query
// that joined on the newest run's ID hashed the table, 34 a pair); on
// SQLite the plan sorts only the runs of one instant (the tie on
// planned start), never a pair's runs. Both agree with LastResults,
// which reads every run.
func TestLastResultsWalkBackFromTheNewestRun(t *testing.T) {
	skipLargeFill(t, "fills sched_run with 26,784 rows")
	const hosts, perPair = 32, 27
	const pairs = hosts * (hosts - 1)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			fillMesh(t, s.Store, hosts, perPair, t0)
			lastPlanned := t0.Add((perPair - 1) * time.Minute)
			// A task for every other pair; h00 → h01's newest instant
			// holds a second, finished run with a greater ID; h00 →
			// h02 has two runs planned after its last, not ended.
			for _, stmt := range []string{
				`INSERT INTO sched_task (id, name, source, dest, args, direction, class, duration_ms, start_at, created, updated)
				SELECT 'x-' || id, test, source, dest, 'tcp', direction, class, 10000, planned, planned, planned
				FROM sched_run WHERE seq = 0 AND NOT (source = 'h00' AND dest IN ('h01', 'h02'))`,
				`INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, ended, state, updated)
				SELECT id || '-tie', task_id, seq + 1, source, dest, test, direction, class, planned, deadline, ended, 'finished', updated
				FROM sched_run WHERE source = 'h00' AND dest = 'h01' AND seq = ` + itoa(perPair-1),
				`INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class, planned, deadline, state, updated)
				SELECT id || '-ahead' || n, task_id, seq + n, source, dest, test, direction, class,
					` + instantSQL(s.Store, lastPlanned, "60 * n") + `, ` + instantSQL(s.Store, lastPlanned, "60 * n + 60") + `, 'scheduled', updated
				FROM sched_run, (SELECT 1 AS n UNION ALL SELECT 2) a WHERE source = 'h00' AND dest = 'h02' AND seq = ` + itoa(perPair-1),
				`ANALYZE`,
			} {
				if _, err := s.db.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}

			all, err := s.LastResults(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[PairKey]PairStatus{}
			for _, p := range all {
				want[p.PairKey] = p
			}
			if tie := want[PairKey{"h00", "h01", "tcp", "forward"}]; tie.State != archive.StateFinished {
				t.Fatalf("LastResults: h00 → h01's last run is %s, want the finished run that ties on its planned start", tie.State)
			}
			last, err := s.ScheduledLastResults(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(last) != pairs {
				t.Fatalf("scheduled last results: %d pairs, want %d", len(last), pairs)
			}
			for _, r := range last {
				if fmt.Sprintf("%+v", r.PairStatus) != fmt.Sprintf("%+v", want[r.PairKey]) {
					t.Errorf("%v: %+v, want LastResults' %+v", r.PairKey, r.PairStatus, want[r.PairKey])
				}
			}
			from, err := s.LastResultsFrom(ctx, "h00")
			if err != nil {
				t.Fatal(err)
			}
			if len(from) != hosts-1 {
				t.Fatalf("last results from h00: %d pairs, want %d", len(from), hosts-1)
			}
			for _, p := range from {
				if fmt.Sprintf("%+v", p) != fmt.Sprintf("%+v", want[p.PairKey]) {
					t.Errorf("from h00, %v: %+v, want LastResults' %+v", p.PairKey, p, want[p.PairKey])
				}
			}

			if s.db.Postgres() {
				read := schedRunRowsRead(t, s.Store, s.scheduledLastResultsQuery(), lastResultsArgs()...)
				t.Logf("ScheduledLastResults read %d rows of sched_run for %d pairs of %d runs", read, pairs, perPair)
				if read > 10*pairs {
					t.Errorf("ScheduledLastResults read %d rows of sched_run, want at most 10 a pair (%d); the history is %d a pair",
						read, 10*pairs, perPair)
				}
				read = schedRunRowsRead(t, s.Store, s.lastResultsFromQuery(), lastResultsArgs("h00")...)
				if read > 10*(hosts-1) {
					t.Errorf("LastResultsFrom read %d rows of sched_run, want at most 10 a pair (%d)", read, 10*(hosts-1))
				}
				return
			}
			sortsOnlyTies(t, "ScheduledLastResults", s.Store, s.scheduledLastResultsQuery(), lastResultsArgs()...)
			sortsOnlyTies(t, "LastResultsFrom", s.Store, s.lastResultsFromQuery(), lastResultsArgs("h00")...)
		})
	}
}

// schedRunRowsRead runs query in a transaction of its own on
// PostgreSQL and returns how many rows of sched_run it read: the rows
// its sequential scans read and the index entries its scans of
// sched_run's indexes returned, from the transaction's own counters.
func schedRunRowsRead(t *testing.T, s *Store, query string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The counters hold what the backend has not yet reported, which
	// may include its earlier transactions: read before and after.
	counted := func() int64 {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT pg_stat_get_xact_tuples_returned('sched_run'::regclass)
			+ (SELECT COALESCE(SUM(pg_stat_get_xact_tuples_returned(indexrelid)), 0) FROM pg_index WHERE indrelid = 'sched_run'::regclass)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := counted()
	rows, err := tx.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	return counted() - before
}

// sortsOnlyTies fails unless SQLite's plan of query searches sched_run
// only through an index, and sorts only in a subquery whose search
// fixes the planned start (a pair's runs of one instant): a pair's runs
// are walked in the index's order, never read whole to be sorted.
func sortsOnlyTies(t *testing.T, what string, s *Store, query string, args ...any) {
	t.Helper()
	rows, err := s.db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type step struct {
		parent int
		detail string
	}
	var steps []step
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, step{parent, detail})
		plan = append(plan, detail)
	}
	walks := 0
	for _, st := range steps {
		if strings.HasPrefix(st.detail, "SCAN sched_run") {
			t.Errorf("%s: the plan scans sched_run whole:\n%s", what, strings.Join(plan, "\n"))
		}
		if strings.HasPrefix(st.detail, "SEARCH") && strings.Contains(st.detail, "sched_run_pair") && !strings.Contains(st.detail, "planned=?") {
			walks++
		}
		if !strings.HasPrefix(st.detail, "USE TEMP B-TREE FOR") || !strings.Contains(st.detail, "ORDER BY") {
			continue
		}
		for _, sib := range steps {
			if sib.parent == st.parent && strings.HasPrefix(sib.detail, "SEARCH") && strings.Contains(sib.detail, "sched_run_pair") &&
				!strings.Contains(sib.detail, "planned=?") {
				t.Errorf("%s: a pair's runs are sorted (%s beside %s):\n%s", what, st.detail, sib.detail, strings.Join(plan, "\n"))
			}
		}
	}
	if walks != 2 {
		t.Errorf("%s: %d walks of sched_run_pair, want 2 (the last run, the last success):\n%s", what, walks, strings.Join(plan, "\n"))
	}
}
