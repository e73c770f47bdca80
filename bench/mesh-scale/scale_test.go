package main

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/race"

	"github.com/jackc/pgx/v5"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/mesh"
	"github.com/wireperf/wireperf/internal/schedule"
)

func TestSyntheticDocumentsAreReadByTheArchive(t *testing.T) {
	began := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	for _, ts := range []testSpec{probeTest, throughputTest} {
		task := &schedule.Task{Name: ts.name, Source: "vh0001", Dest: "vh0002", Args: ts.args}
		doc, err := syntheticDocument(task, began, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		p, err := archive.ParseDocument(doc)
		if err != nil {
			t.Fatalf("%s: the archive refuses the document: %v", ts.name, err)
		}
		if p.Error != "" {
			t.Errorf("%s: the document says error %q", ts.name, p.Error)
		}
		if p.RemoteHost != "vh0002" {
			t.Errorf("%s: remote host %q, want vh0002", ts.name, p.RemoteHost)
		}
		switch ts.args[0] {
		case "rr":
			if p.Summary.RRp50us == nil || *p.Summary.RRp50us <= 0 || p.Summary.LostPercent == nil || *p.Summary.LostPercent != 0 {
				t.Errorf("rr: summary %+v, want a p50 and no loss", p.Summary)
			}
		default:
			if p.Summary.ReceivedBps == nil || *p.Summary.ReceivedBps < 100e6 || *p.Summary.ReceivedBps > 1e9 {
				t.Errorf("client: goodput %v, want 100 Mb/s to 1 Gb/s", p.Summary.ReceivedBps)
			}
			if ax, ok := p.Axes["time"]; !ok || ax.Label != "10" {
				t.Errorf("client: time axis %+v, want 10", p.Axes["time"])
			}
		}
	}
}

// The harness's tasks are the mesh file's, as `mesh apply` stores them:
// per host, one rotating task per sampled partner and test; in each
// period every host runs each test to its number of partners (all
// different) and is run to by as many, the exclusive runs of one instant
// share no host, and background runs start on the period. The same draw
// gives the same partners, another draw others.
func TestMeshTasksAreTheMeshFiles(t *testing.T) {
	start := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	const n = 50
	tasks, err := meshTasks(n, 7, start, start.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := n*probeTest.partners + n*throughputTest.partners; len(tasks) != want {
		t.Fatalf("%d tasks, want %d", len(tasks), want)
	}
	m, err := mesh.Parse("mesh-scale.yaml", []byte(meshFile(n, 7, start, start.Add(time.Hour), 0)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Tasks(), tasks) {
		t.Fatal("the harness's tasks are not the mesh file's")
	}
	firstPeriod := func(tasks []*schedule.Task) map[string][]string { // test/source → its partners in the first period
		out := map[string][]string{}
		for _, tk := range tasks {
			period := probeTest.repeat
			if tk.Name == throughputTest.name {
				period = throughputTest.repeat
			}
			for _, r := range schedule.Next(tk, start, period, 10) {
				out[tk.Name+"/"+tk.Source] = append(out[tk.Name+"/"+tk.Source], tk.RunDest(r.Seq).Host)
			}
		}
		return out
	}
	partners := firstPeriod(tasks)
	for _, ts := range []testSpec{probeTest, throughputTest} {
		in := map[string]int{}
		for i := range n {
			src := hostName(i)
			dests := partners[ts.name+"/"+src]
			if len(dests) != ts.partners || slices.Contains(dests, src) || len(slices.Compact(slices.Sorted(slices.Values(dests)))) != ts.partners {
				t.Errorf("%s: %s runs to %v in the first period, want %d other hosts", ts.name, src, dests, ts.partners)
			}
			for _, d := range dests {
				in[d]++
			}
		}
		for h, k := range in {
			if k != ts.partners {
				t.Errorf("%s: %s is run to %d times in the first period, want %d", ts.name, h, k, ts.partners)
			}
		}
	}
	busy := map[time.Time]map[string]bool{} // exclusive runs' instants → their hosts
	for _, tk := range tasks {
		for _, r := range schedule.Next(tk, start, throughputTest.repeat, 100) {
			if tk.Class == schedule.Background {
				if (r.Planned.Sub(start))%probeTest.repeat != 0 {
					t.Errorf("background run %s at %v, not on its period", r.ID, r.Planned)
				}
				continue
			}
			if busy[r.Planned] == nil {
				busy[r.Planned] = map[string]bool{}
			}
			for _, h := range []string{tk.Source, tk.RunDest(r.Seq).Host} {
				if busy[r.Planned][h] {
					t.Fatalf("two exclusive runs of %s at %v", h, r.Planned)
				}
				busy[r.Planned][h] = true
			}
		}
	}
	again, _ := meshTasks(n, 7, start, start.Add(time.Hour), 0)
	other, _ := meshTasks(n, 8, start, start.Add(time.Hour), 0)
	if !reflect.DeepEqual(firstPeriod(again), partners) {
		t.Error("the same draw sampled other partners")
	}
	if reflect.DeepEqual(firstPeriod(other), partners) {
		t.Error("another draw sampled the same partners")
	}
}

// The simulation in CI: 200 virtual hosts for 3 minutes of schedule, as
// the issue asks (about 4 minutes in all, with the daemons' start and
// the schedule's margin), in make test's timed pass.
const (
	ciHosts  = 200
	ciLength = 3 * time.Minute
	// ciConnsPerHost is the daemon's PostgreSQL budget; the cluster
	// needs that many for each host, and a margin for the other tests.
	ciConnsPerHost = 2
	ciMaxLagP99    = 2 * time.Second
	// ciMaxTransactionsPerRun is the database's budget for each finished
	// run in the steady state, the 8. It was about 47 before the
	// daemon's River polls, its runs' starts and ends, its plans, its
	// pings, its connections and its jobs' completions were made cheaper
	// (docs/scale.md, "Where a run's transactions go"); 5.88 was
	// measured after, at this size, at a load average of 15. The margin
	// is for what the daemons don't do but the count sees: DDL elsewhere
	// in the cluster (another test creating its database) makes every
	// idle backend take a transaction to catch up on the catalog's
	// invalidations, which added 1.6 a run when tests ran beside it.
	ciMaxTransactionsPerRun = 8.0
	// ciMaxConnectionsPerRun bounds the connections the daemons open in
	// the steady state (each costs transactions no statement counter
	// sees: its start, a ping, its statements described anew). A test's
	// end cancelled its lease renewal, and pgx closed the connection:
	// 0.44 a run; since, about 0.01.
	ciMaxConnectionsPerRun = 0.1
	// ciProbeRandomSlip spreads each minute's 800 probes over 50 s, as
	// a mesh of this size should (docs/scale.md): started on the minute
	// together, they are one burst of some 5,000 transactions, and on
	// CI's 2 cores the whole burst starts about 5 s late.
	ciProbeRandomSlip = 50 * time.Second
	// ciQueueMaintainers: as docs/daemon.md deploys a mesh of hundreds
	// of hosts, a few daemons take part in River's leader election.
	ciQueueMaintainers = 3
)

func TestMeshScale(t *testing.T) { meshScale(t, ciLength) }

func meshScale(t *testing.T, length time.Duration) {
	dsn := os.Getenv("WIREPERF_TEST_PG_DSN")
	switch {
	case testing.Short():
		t.Skip("-short: the simulation takes minutes")
	case race.Enabled:
		t.Skip("the schedule's lag is held to 2 s; skipped under the race detector (make test runs it in its timed pass)")
	case dsn == "":
		t.Skip("WIREPERF_TEST_PG_DSN not set: the simulation needs PostgreSQL (bash .ci/pg.sh start)")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, archive.PostgresDSN(dsn))
	if err != nil {
		t.Fatal(err)
	}
	var maxConns int
	err = conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int`).Scan(&maxConns)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if need := ciHosts*ciConnsPerHost + 50; maxConns < need {
		t.Skipf("the cluster's max_connections is %d; %d hosts need %d (.ci/pg.sh starts its clusters with 500)", maxConns, ciHosts, need)
	}
	rep, err := run(ctx, Options{Hosts: ciHosts, Length: length, DSN: dsn, NewDB: true, Draw: 1, ArchiveConns: 1, ProbeRandomSlip: ciProbeRandomSlip,
		QueueMaintainers: ciQueueMaintainers})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Markdown(&b)
	t.Log("\n" + b.String())
	if len(rep.Overlaps) > 0 {
		t.Errorf("%d overlaps of exclusive runs: %v", len(rep.Overlaps), rep.Overlaps)
	}
	if rep.WithoutReason > 0 {
		t.Errorf("%d runs missed, failed or aborted without a reason", rep.WithoutReason)
	}
	if len(rep.DaemonErrors) > 0 {
		t.Errorf("daemons stopped before the end: %v", rep.DaemonErrors)
	}
	if rep.Runs != rep.Expected {
		t.Errorf("the archive holds %d runs planned in the schedule, its tasks give %d", rep.Runs, rep.Expected)
	}
	if rep.LeftOpen > 0 {
		t.Errorf("%d runs still scheduled or running after the schedule", rep.LeftOpen)
	}
	all := rep.Lag[0]
	// Every host probes 4 partners a minute: the schedule planned at
	// least that many runs, and most started.
	if min := int64(ciHosts * probeTest.partners * int(length/probeTest.repeat)); all.Runs < min*9/10 {
		t.Errorf("%d runs started, want at least %d of the %d probes planned", all.Runs, min*9/10, min)
	}
	if c := rep.Cost; c.Runs > 0 && c.Transactions > ciMaxTransactionsPerRun {
		t.Errorf("%.2f PostgreSQL transactions per finished run, over the budget of %.1f", c.Transactions, ciMaxTransactionsPerRun)
	}
	if c := rep.Cost; c.Runs > 0 && c.Connections > ciMaxConnectionsPerRun {
		t.Errorf("%.3f connections opened per finished run, over %.2f: the daemons' connections are being closed and opened again", c.Connections, ciMaxConnectionsPerRun)
	}
	if p99 := time.Duration(all.P99 * float64(time.Second)); p99 >= ciMaxLagP99 {
		t.Errorf("schedule lag p99 %v, want under %v", p99, ciMaxLagP99)
	}
}
