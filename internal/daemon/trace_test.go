package daemon_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/testutil/promtest"
)

// A trace task runs beside a throughput task of the same pair: its path
// is stored, counted on /metrics, and a change of it marks the pair's
// history on /grid, where the trace test has no cells of its own.
func TestTraceTaskRecordsItsPath(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("a trace needs root: a raw ICMP socket")
	}
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, true, nil)
	ctx := context.Background()
	tput := loopTask("tput", "a", "b", d.ServerPort(), 1, 5*time.Second, 4*time.Second, 2)
	path := &schedule.Task{ID: schedule.DefineID("test", "path", "a", "b"), Name: "path", Source: "a", Dest: "b",
		DestAddr: tput.DestAddr, Args: []string{"trace", "--max-hops", "3", "--probes", "2"}, Class: schedule.Background,
		Duration: 5 * time.Second, Start: tput.Start, Repeat: 5 * time.Second, Slip: 4 * time.Second, MaxRuns: 2, Origin: "test"}
	for _, tk := range []*schedule.Task{tput, path} {
		if _, err := d.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stop := start(t, d)
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, r := range waitDone(t, st, 4, 60*time.Second) {
		if r.State != archive.StateFinished {
			t.Fatalf("run %s of %s: %s (%s)", r.ID, r.Test, r.State, r.Reason)
		}
	}
	paths, err := st.Paths(ctx, archive.PathFilter{Source: "a", Dest: "b", Test: "path"})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Fatalf("%d paths stored, want one a run: %+v", len(paths), paths)
	}
	for _, p := range paths {
		if !slices.Equal(p.Hops, []string{"127.0.0.1"}) || !p.Reached || p.Changed {
			t.Fatalf("path %+v, want 127.0.0.1 reached and unchanged", p)
		}
		rec, err := st.Get(ctx, p.RunID)
		if err != nil || rec.Cmdline != "wireperf trace --max-hops=3 --probes=2 --json -- 127.0.0.1" {
			t.Fatalf("the trace run's record: %+v, %v", rec, err)
		}
	}
	metric := func() float64 {
		t.Helper()
		for _, m := range promtest.Scrape(t, d.Mux())["wireperf_mesh_path_changes_total"].GetMetric() {
			if promtest.Label(m, "src") == "a" && promtest.Label(m, "dst") == "b" && promtest.Label(m, "test") == "path" {
				return m.GetCounter().GetValue()
			}
		}
		t.Fatal("no wireperf_mesh_path_changes_total for a→b")
		return 0
	}
	if got := metric(); got != 0 {
		t.Fatalf("path changes %v before any, want 0", got)
	}
	// Another path stored in the archive by someone else (as the worker
	// stores one, but not by this daemon): the grid's history shows it,
	// while the counter counts only the changes this daemon recorded, so
	// that no prune of the archive can lower it (the lab's trace test sees
	// the daemon count a real change).
	at := time.Now().UTC()
	if err := st.PutRun(ctx, &archive.Run{ID: "later", State: archive.StateFinished, Source: archive.SourceNative, LocalHost: "a", RemoteHost: "b", Started: at}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPath(ctx, &archive.Path{RunID: "later", Source: "a", Dest: "b", Test: "path", At: at, Hops: []string{"192.0.2.1", "127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if got := metric(); got != 0 {
		t.Fatalf("path changes %v after another's change, want 0 (this daemon's own)", got)
	}
	page := string(get(t, d, "/grid"))
	if !strings.Contains(page, `data-test="tput"`) || strings.Contains(page, `data-test="path"`) {
		t.Error("/grid: want the throughput test's section and none for the trace test")
	}
	if !strings.Contains(page, `"from":"127.0.0.1","to":"192.0.2.1 127.0.0.1"`) {
		t.Error("/grid: the route change is not in the pair's history")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
