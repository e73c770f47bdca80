package taskstore

import (
	"context"
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

			planUses(t, "one source's run counts", planOf(t, s.Store, stateCountsFromQuery, "h03"), "sched_run", "sched_run_source_state")
			counts, err := s.StateCountsFrom(ctx, "h03")
			if err != nil {
				t.Fatal(err)
			}
			if counts[archive.StateFinished] != (hosts-1)*(perPair-1) || counts[archive.StateFailed] != hosts-1 {
				t.Errorf("h03's runs by state = %v, want %d finished and %d failed", counts, (hosts-1)*(perPair-1), hosts-1)
			}

			planUses(t, "each scheduled pair's last run", planOf(t, s.Store, scheduledLastResultsQuery, append([]any{archive.StateFinished}, doneStates...)...),
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
