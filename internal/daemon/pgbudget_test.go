package daemon_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

func TestPoolerDSN(t *testing.T) {
	t.Setenv("PGAPPNAME", "")
	for _, c := range []struct{ in, want string }{
		{"postgres://u@db/w?sslmode=disable", "postgres://u@db/w?application_name=wireperf-daemon-a&default_query_exec_mode=cache_describe&sslmode=disable"},
		{"POSTGRES://u@db/w", "postgres://u@db/w?application_name=wireperf-daemon-a&default_query_exec_mode=cache_describe"},
		{"postgres://u@db/w?application_name=mine&default_query_exec_mode=cache_describe", "postgres://u@db/w?application_name=mine&default_query_exec_mode=cache_describe"},
		{"host=db dbname=w", "host=db dbname=w default_query_exec_mode='cache_describe' application_name='wireperf-daemon-a'"},
		{"host=db application_name='my app' dbname=w", "host=db application_name='my app' dbname=w default_query_exec_mode='cache_describe'"},
		{"/var/lib/wireperf/a.db", "/var/lib/wireperf/a.db"},
	} {
		got, err := daemon.PoolerDSN(c.in, "a")
		if err != nil || got != c.want {
			t.Errorf("%s: got %q %v, want %q", c.in, got, err, c.want)
		}
	}
	// $PGAPPNAME names the connections as the DSN's application_name would.
	t.Setenv("PGAPPNAME", "from-env")
	if got, _ := daemon.PoolerDSN("host=db", "a"); strings.Contains(got, "application_name") {
		t.Errorf("with $PGAPPNAME: %q", got)
	}
	// Modes a pooler in transaction mode breaks, or River's queue does: one line.
	for _, dsn := range []string{
		"postgres://u:secret@db/w?default_query_exec_mode=cache_statement",
		"postgres://u@db/w?default_query_exec_mode=describe_exec",
		"host=db password=secret default_query_exec_mode=simple_protocol",
		"host=db default_query_exec_mode='exec'",
	} {
		_, err := daemon.PoolerDSN(dsn, "a")
		if err == nil || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "secret") ||
			!strings.Contains(err.Error(), "default_query_exec_mode=") || !strings.Contains(err.Error(), "give cache_describe") {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}

// connsOf counts the server connections named app.
func connsOf(t *testing.T, admin *sql.DB, app string) int {
	t.Helper()
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A daemon holds at most 2 PostgreSQL connections (River's queue one,
// the archive one) while it plans, runs tests (an exclusive one and
// background ones at once), records results and answers its API under
// load.
func TestDaemonConnectionBudget(t *testing.T) {
	dsn, ok := archivetest.Backends(t)["postgres"]
	if !ok {
		t.Skip(archivetest.EnvPG + " not set: the connection budget is PostgreSQL's")
	}
	t.Setenv("PGAPPNAME", "")
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	a := newDaemon(t, "a", dsn, false, nil)
	b := newDaemon(t, "b", dsn, true, nil)
	ctx := context.Background()
	const runs = 2
	tasks := []*schedule.Task{loopTask("tput", "a", "b", b.ServerPort(), 1, 4*time.Second, 3*time.Second, runs)}
	for _, name := range []string{"probe1", "probe2"} {
		tk := loopTask(name, "a", "b", b.ServerPort(), 1, 4*time.Second, 3*time.Second, runs)
		tk.Class = schedule.Background
		tasks = append(tasks, tk)
	}
	for _, tk := range tasks {
		if _, err := a.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stopA, stopB := start(t, a), start(t, b)
	api := httptest.NewServer(a.Mux())
	defer api.Close()
	done := make(chan struct{})
	var load sync.WaitGroup
	for range 4 {
		load.Add(1)
		go func() {
			defer load.Done()
			paths := []string{"/api/schedule?next=1h", "/api/runs", "/grid", "/metrics", "/api/tasks"}
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if resp, err := http.Get(api.URL + paths[i%len(paths)]); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				time.Sleep(20 * time.Millisecond) // load generator: a request every 20 ms from each of 4 clients
			}
		}()
	}
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	most := map[string]int{}
	deadline := time.Now().Add(90 * time.Second)
	for finished := false; !finished; {
		for _, h := range []string{"a", "b"} {
			most[h] = max(most[h], connsOf(t, admin, "wireperf-daemon-"+h))
		}
		all, err := sched.SchedRuns(ctx, taskstore.RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		ended := 0
		for _, r := range all {
			if r.State != archive.StateScheduled && r.State != archive.StateRunning {
				ended++
			}
		}
		finished = ended >= len(tasks)*runs
		if !finished && time.Now().After(deadline) {
			t.Fatalf("%d of %d runs ended", ended, len(tasks)*runs)
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: pg_stat_activity and the runs, until the deadline above
	}
	close(done)
	load.Wait()
	all, _ := sched.SchedRuns(ctx, taskstore.RunQuery{})
	finished := 0
	for _, r := range all {
		if r.State == archive.StateFinished {
			finished++
		}
	}
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	stopB()
	t.Logf("most connections: %v; %d of %d runs finished", most, finished, len(all))
	for _, h := range []string{"a", "b"} {
		if most[h] < 1 || most[h] > daemon.MaxPostgresConns {
			t.Errorf("daemon %s held up to %d connections, want 1 to %d", h, most[h], daemon.MaxPostgresConns)
		}
	}
	if finished == 0 {
		t.Fatal("no run finished")
	}
}
