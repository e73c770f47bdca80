package main

import (
	"context"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wireperf/wireperf/internal/archive"
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

func TestMeshTasksSamplePartnersOnce(t *testing.T) {
	start := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	const n = 50
	tasks, err := meshTasks(n, 7, start, start.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := n*probeTest.partners + n*throughputTest.partners; len(tasks) != want {
		t.Fatalf("%d tasks, want %d", len(tasks), want)
	}
	perHost := map[string]map[string][]string{} // test → source → dests
	var exclusiveStarts []time.Time
	for _, tk := range tasks {
		if tk.Source == tk.Dest {
			t.Errorf("task %s tests %s to itself", tk.ID, tk.Source)
		}
		if perHost[tk.Name] == nil {
			perHost[tk.Name] = map[string][]string{}
		}
		if slices.Contains(perHost[tk.Name][tk.Source], tk.Dest) {
			t.Errorf("%s: %s→%s twice", tk.Name, tk.Source, tk.Dest)
		}
		perHost[tk.Name][tk.Source] = append(perHost[tk.Name][tk.Source], tk.Dest)
		if tk.Class == schedule.Exclusive {
			exclusiveStarts = append(exclusiveStarts, tk.Start)
		} else if !tk.Start.Equal(start) {
			t.Errorf("background task %s starts at %v, want the period's start", tk.ID, tk.Start)
		}
	}
	for name, k := range map[string]int{probeTest.name: probeTest.partners, throughputTest.name: throughputTest.partners} {
		if len(perHost[name]) != n {
			t.Errorf("%s: %d sources, want %d", name, len(perHost[name]), n)
		}
		for src, dests := range perHost[name] {
			if len(dests) != k {
				t.Errorf("%s: %s has %d partners, want %d", name, src, len(dests), k)
			}
		}
	}
	// Exclusive runs are spread over the period: no two start together.
	slices.SortFunc(exclusiveStarts, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(exclusiveStarts); i++ {
		if !exclusiveStarts[i].After(exclusiveStarts[i-1]) {
			t.Fatalf("two exclusive tasks start at %v", exclusiveStarts[i])
		}
	}
	again, _ := meshTasks(n, 7, start, start.Add(time.Hour), 0)
	other, _ := meshTasks(n, 8, start, start.Add(time.Hour), 0)
	ids := func(ts []*schedule.Task) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(ids(tasks), ids(again)) {
		t.Error("the same draw sampled other partners")
	}
	if slices.Equal(ids(tasks), ids(other)) {
		t.Error("another draw sampled the same partners")
	}
}

// The simulation in CI: 200 virtual hosts, as the issue asks. The
// default suite runs the schedule for ciLength, about two minutes with
// the daemons' start and the schedule's margin; TestMeshScaleThreeMinutes
// runs it for the 3 minutes, only when -run names it (the
// archive's and the daemon's suites already take most of CI's 25
// minutes).
const (
	ciHosts  = 200
	ciLength = time.Minute
	// ciConnsPerHost is the daemon's PostgreSQL budget; the cluster
	// needs that many for each host, and a margin for the other tests.
	ciConnsPerHost = 2
	ciMaxLagP99    = 2 * time.Second
	// ciProbeRandomSlip spreads each minute's 800 probes over 50 s, as
	// a mesh of this size should (docs/scale.md): started on the minute
	// together, they are one burst of some 5,000 transactions, and on
	// CI's 2 cores the whole burst starts about 5 s late.
	ciProbeRandomSlip = 50 * time.Second
)

func TestMeshScale(t *testing.T) { meshScale(t, ciLength) }

func TestMeshScaleThreeMinutes(t *testing.T) {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != t.Name() {
		t.Skip("runs only when -run names it: go test ./bench/mesh-scale -run '^TestMeshScaleThreeMinutes$'")
	}
	meshScale(t, 3*time.Minute)
}

func meshScale(t *testing.T, length time.Duration) {
	dsn := os.Getenv("WIREPERF_TEST_PG_DSN")
	switch {
	case testing.Short():
		t.Skip("-short: the simulation takes minutes")
	case raceEnabled:
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
	rep, err := run(ctx, Options{Hosts: ciHosts, Length: length, DSN: dsn, NewDB: true, Draw: 1, ArchiveConns: 1, ProbeRandomSlip: ciProbeRandomSlip})
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
	if p99 := time.Duration(all.P99 * float64(time.Second)); p99 >= ciMaxLagP99 {
		t.Errorf("schedule lag p99 %v, want under %v", p99, ciMaxLagP99)
	}
}
