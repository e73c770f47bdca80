package daemon_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// The grid of a 1,000-host mesh (10 groups of 100, each host probing 4
// partners of its group) over an archive holding a day of its runs, one
// an hour a pair (96,000): the summarised /grid and a /grid/block each
// read what they show, not the day. docs/scale.md has the figures this
// logs (go test -run GridOfAThousand -v), beside those of the whole
// day's read that a page of every pair's history would take; the test
// asserts what each request reads, never its time: on PostgreSQL with
// WIREPERF_GRID_SCALE=rows, that the first /grid reads at most 10 rows
// of sched_run a pair (the walk back from each pair's newest run; a
// hash of the table read it 4 times over) and a later one almost none
// (what the daemon's own work reads meanwhile). Both
// backends. It is a measurement, some 2 minutes on a loaded 2-core
// machine, run when asked: WIREPERF_GRID_SCALE=1 (=rows: with
// PostgreSQL's rows read).
func TestGridOfAThousandHostMesh(t *testing.T) {
	if os.Getenv("WIREPERF_GRID_SCALE") == "" {
		t.Skip("a measurement of 96,000 runs: WIREPERF_GRID_SCALE=1 runs it")
	}
	const hosts, groupSize, partners, hoursOfRuns = 1000, 100, 4, 24
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := newDaemon(t, "h0000", dsn, false, nil)
			t.Cleanup(func() { d.CloseQueue(); d.Store().Close() })
			st, sched := d.Store(), d.Schedule()
			now := time.Now().UTC().Truncate(time.Second)
			host := func(i int) string { return fmt.Sprintf("h%04d", i) }
			var tasks []*schedule.Task
			for i := range hosts {
				g := i / groupSize
				for k := 1; k <= partners; k++ {
					dst := g*groupSize + (i%groupSize+k)%groupSize
					tk := loopTask("rtt", host(i), host(dst), 5201, 1, time.Hour, time.Minute, 0)
					tk.Start, tk.Group, tk.Origin = now.Add(-hoursOfRuns*time.Hour), fmt.Sprintf("g%d", g), "scale"
					tasks = append(tasks, tk)
				}
			}
			if _, err := sched.ApplyTasks(ctx, "scale", tasks, now); err != nil {
				t.Fatal(err)
			}
			fillRuns(t, st, tasks, hoursOfRuns)

			mux := d.Mux() // one page cache, as the daemon serves
			pg := pgCounters(t, dsn, st)
			measure := func(what, path string, mux http.Handler) (string, dbCounters) {
				t.Helper()
				dbBefore := pg()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				took := time.Since(start)
				runtime.ReadMemStats(&after)
				if rec.Code != 200 {
					t.Fatalf("%s: %d %s", what, rec.Code, rec.Body.String())
				}
				dbAfter := pg()
				t.Logf("%s %s: %d ms, %.1f MB allocated, %d kB sent%s", name, what, took.Milliseconds(),
					float64(after.TotalAlloc-before.TotalAlloc)/1e6, rec.Body.Len()/1000, dbAfter.since(dbBefore))
				return rec.Body.String(), dbAfter.minus(dbBefore)
			}
			pairs := int64(hosts * partners)
			page, first := measure("/grid, first request (each pair's last run, one query)", "/grid", mux)
			if !strings.Contains(page, "1000 hosts in 10 groups") || strings.Contains(page, "data-src=") {
				t.Fatalf("/grid is not a summary of 10 groups:\n%.1500s", page)
			}
			if first.ok && first.schedRun > 10*pairs {
				t.Errorf("the first /grid read %d rows of sched_run, want at most 10 a pair (%d): each pair's newest run, not the history",
					first.schedRun, 10*pairs)
			}
			// The counters are the database's: a later request's few rows
			// are the daemon's own work meanwhile (its queue, its waiting
			// runs), not the page's.
			_, cached := measure("/grid within the page's TTL (the page as drawn)", "/grid", mux)
			// A new page cache: the drawing after the TTL, from the
			// daemon's copy of the last runs and the runs changed since.
			_, later := measure("/grid after the TTL (drawn again; no run changed)", "/grid", d.Mux())
			for what, c := range map[string]dbCounters{"within its TTL": cached, "after its TTL, no run changed": later} {
				if c.ok && c.schedRun > pairs/100 {
					t.Errorf("/grid %s read %d rows of sched_run, want almost none (at most %d)", what, c.schedRun, pairs/100)
				}
			}
			block, _ := measure("/grid/block, 100 × 100 hosts with their day's histories", "/grid/block?test=0&from=g3&to=g3", mux)
			if rows := strings.Count(block, `<th scope="row"`); rows != groupSize {
				t.Errorf("the block has %d rows, want %d", rows, groupSize)
			}

			// What each request's queries return, beside the day a page
			// of every pair's history would read.
			rowsOf := func(what string, f func() (int, error)) {
				t.Helper()
				start := time.Now()
				n, err := f()
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s: %d rows in %d ms", name, what, n, time.Since(start).Milliseconds())
			}
			ts := taskstore.New(st)
			rowsOf("ScheduledLastResults (the first /grid)", func() (int, error) {
				r, err := ts.ScheduledLastResults(ctx)
				if len(r) != hosts*partners {
					t.Errorf("ScheduledLastResults: %d rows, want one a pair (%d)", len(r), hosts*partners)
				}
				return len(r), err
			})
			rowsOf("ResultsUpdatedSince the last look (each later /grid)", func() (int, error) {
				r, err := ts.ResultsUpdatedSince(ctx, now.Add(time.Minute))
				if len(r) != 0 {
					t.Errorf("ResultsUpdatedSince: %d rows, none changed", len(r))
				}
				return len(r), err
			})
			var g3 []string
			for i := 3 * groupSize; i < 4*groupSize; i++ {
				g3 = append(g3, host(i))
			}
			rowsOf("BlockHistory of g3 × g3 (a /grid/block)", func() (int, error) {
				r, err := ts.BlockHistory(ctx, g3, g3, "rtt", now.Add(-daemon.HistoryWindow))
				if want := groupSize * partners * hoursOfRuns; len(r) != want {
					t.Errorf("BlockHistory: %d rows, want the block's day (%d)", len(r), want)
				}
				return len(r), err
			})
			rowsOf("PairHistory of the day (every pair's history: what no request reads)", func() (int, error) {
				r, err := ts.PairHistory(ctx, now.Add(-daemon.HistoryWindow))
				return len(r), err
			})
			rowsOf("LastResults over the whole archive (what /grid read before its cache)", func() (int, error) {
				r, err := ts.LastResults(ctx)
				return len(r), err
			})
		})
	}
}

// fillRuns stores each task's runs of the last hours, one an hour, as
// finished with a summary, in one transaction (as the daemon would have
// written them one by one).
func fillRuns(t *testing.T, st *archive.Store, tasks []*schedule.Task, hours int) {
	t.Helper()
	ctx := context.Background()
	db := st.DB()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	insRun, err := tx.PrepareContext(ctx, db.Rebind(`INSERT INTO sched_run (id, task_id, seq, source, dest, test, direction, class,
		planned, deadline, actual_start, ended, state, reason, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)`))
	if err != nil {
		t.Fatal(err)
	}
	insSummary, err := tx.PrepareContext(ctx, db.Rebind(`INSERT INTO run_summary (run_id, seconds, probe_p50_us, probe_p99_us, lost_percent) VALUES (?, 1, ?, ?, 0)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		for seq := range hours {
			r, _ := tk.At(seq)
			sr := taskstore.NewSchedRun(tk, r)
			end := r.Planned.Add(2 * time.Second)
			if _, err := insRun.ExecContext(ctx, sr.ID, tk.ID, seq, tk.Source, tk.Dest, tk.Name, string(schedule.Forward), string(tk.Class),
				r.Planned, r.Deadline, r.Planned, end, archive.StateFinished, end); err != nil {
				t.Fatal(err)
			}
			if _, err := insSummary.ExecContext(ctx, sr.ID, 300.0+float64(seq), 900.0+float64(seq)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
}

// dbCounters are PostgreSQL's counters of the rows one database's scans
// read (tup_returned: sequential and bitmap scans' rows, tup_fetched:
// index scans'), and of sched_run's (its sequential scans' rows and the
// entries its indexes' scans returned).
type dbCounters struct {
	ok                bool
	returned, fetched int64
	schedRun          int64
}

func (c dbCounters) since(before dbCounters) string {
	if !c.ok || !before.ok {
		return ""
	}
	d := c.minus(before)
	return fmt.Sprintf("; PostgreSQL: %d rows read (%d by index), %d of sched_run", d.returned+d.fetched, d.fetched, d.schedRun)
}

// minus is what was counted between before and c; not ok unless both are.
func (c dbCounters) minus(before dbCounters) dbCounters {
	return dbCounters{ok: c.ok && before.ok, returned: c.returned - before.returned, fetched: c.fetched - before.fetched,
		schedRun: c.schedRun - before.schedRun}
}

// pgCounters reads dsn's counters when it is PostgreSQL; else nothing.
// A backend reports its counts when idle for a while, or as it exits:
// the daemon's connections (st's pool) are closed after each use, so
// that the backends that served a request have reported when it ends,
// and a reading polls the counters until the rows read stay the same
// for 3 s, for at most 15 s. (Its times are then not the daemon's: each
// query opens a connection.)
func pgCounters(t *testing.T, dsn string, st *archive.Store) func() dbCounters {
	if !archive.IsPostgres(dsn) {
		return func() dbCounters { return dbCounters{} }
	}
	if os.Getenv("WIREPERF_GRID_SCALE") != "rows" {
		t.Log("rows read by PostgreSQL: WIREPERF_GRID_SCALE=rows (connections then close after each use)")
		return func() dbCounters { return dbCounters{} }
	}
	st.DB().SetMaxIdleConns(0)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	read := func() dbCounters {
		c := dbCounters{ok: true}
		if err := db.QueryRow(`SELECT tup_returned, tup_fetched,
				(SELECT COALESCE(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = 'sched_run')
				+ (SELECT COALESCE(SUM(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = 'sched_run')
			FROM pg_stat_database WHERE datname = current_database()`).Scan(&c.returned, &c.fetched, &c.schedRun); err != nil {
			t.Fatal(err)
		}
		return c
	}
	return func() dbCounters {
		c, same := read(), 0
		for deadline := time.Now().Add(15 * time.Second); same < 3 && time.Now().Before(deadline); {
			time.Sleep(time.Second) // bounded poll: the counters have no event to wait for
			n := read()
			if n == c {
				same++
			} else {
				same = 0
			}
			c = n
		}
		return c
	}
}
