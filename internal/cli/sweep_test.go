package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/hostmon"
)

// storedRun is a run as `runs -J` prints it.
type storedRun struct {
	ID       string             `json:"id"`
	Campaign string             `json:"campaign"`
	Source   string             `json:"source"`
	Axes     map[string]any     `json:"axes"`
	Start    string             `json:"start"`
	State    string             `json:"state"`
	Error    string             `json:"error"`
	Summary  map[string]float64 `json:"summary"`
}

// eachArchive runs f against a loopback server, once for each archive
// backend the tests can reach (archivetest.Backends), as a subtest.
func eachArchive(t *testing.T, f func(t *testing.T, port, db string)) {
	t.Helper()
	port := strconv.Itoa(startServer(t))
	for name, db := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) { f(t, port, db) })
	}
}

func listRuns(t *testing.T, args ...string) []storedRun {
	t.Helper()
	code, out, stderr := runCLI(append([]string{"runs", "-J"}, args...)...)
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, stderr)
	}
	var runs []storedRun
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("runs -J: %v\n%s", err, out)
	}
	return runs
}

func TestSweepStoresTabulatesAndResumes(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	for name, db := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			args := []string{"sweep", "127.0.0.1", "-p", port, "--window", "64K,256K", "-P", "1,2", "-t", "0.2",
				"--repeat", "2", "--name", "grid", "--db", db, "--", "-i", "0.1"}
			code, out, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
			}
			if n := strings.Count(out, " rep "); n != 8 {
				t.Errorf("%d result lines, want 8:\n%s", n, out)
			}
			runs := listRuns(t, "--db", db, "--campaign", "grid")
			if len(runs) != 8 {
				t.Fatalf("stored %d runs, want 8", len(runs))
			}
			ids := map[string]bool{}
			for _, r := range runs {
				ids[r.ID] = true
				if r.State != "finished" || r.Source != "native" || r.Campaign != "grid" || r.Start == "" {
					t.Errorf("run %+v", r)
				}
				if r.Summary["received_bits_per_second"] <= 0 || r.Summary["sent_bits_per_second"] <= 0 {
					t.Errorf("run %s summary %v", r.ID, r.Summary)
				}
				w, _ := r.Axes["window"].(float64)
				p, _ := r.Axes["parallel"].(float64)
				if (w != 65536 && w != 262144) || (p != 1 && p != 2) || r.Axes["time"] != 0.2 {
					t.Errorf("run %s axes %v: want base units", r.ID, r.Axes)
				}
			}
			if len(ids) != 8 {
				t.Errorf("%d distinct IDs", len(ids))
			}

			// The order run is the order the recorded shuffle key gives.
			key := regexp.MustCompile(`shuffle key (\d+)`).FindStringSubmatch(out)
			if key == nil {
				t.Fatalf("no shuffle key in\n%s", out)
			}
			dash := slices.Index(args, "--")
			dry := append(append(slices.Clone(args[:dash]), "--shuffle-key", key[1], "--dry-run"), args[dash:]...)
			code, plan, _ := runCLI(dry...)
			if code != 0 {
				t.Fatalf("dry run: exit %d\n%s", code, plan)
			}
			ran := regexp.MustCompile(`(?m)^\[\d+/8\] ([0-9a-f]{8})`).FindAllStringSubmatch(out, -1)
			planned := regexp.MustCompile(`(?m)^\s+\d+  ([0-9a-f]{8})`).FindAllStringSubmatch(plan, -1)
			if len(ran) != 8 || len(planned) != 8 {
				t.Fatalf("%d runs ran, %d planned:\n%s\n%s", len(ran), len(planned), out, plan)
			}
			for i := range ran {
				if ran[i][1] != planned[i][1] {
					t.Fatalf("run %d was %s; shuffle key %s plans %s:\n%s\n%s", i+1, ran[i][1], key[1], planned[i][1], out, plan)
				}
			}

			// The same campaign again runs nothing.
			code, out, _ = runCLI(args...)
			if code != 0 || !strings.Contains(out, "0 to run") || strings.Count(out, " rep ") != 0 {
				t.Errorf("second sweep: exit %d\n%s", code, out)
			}
			if again := listRuns(t, "--db", db, "--campaign", "grid"); len(again) != 8 {
				t.Errorf("%d runs after the second sweep", len(again))
			}

			// The table: 2 × 2 cells of 2 repetitions each.
			code, out, stderr = runCLI("table", "--db", db, "--campaign", "grid", "--rows", "window", "--cols", "parallel", "--format", "json")
			if code != 0 {
				t.Fatalf("table: exit %d: %s", code, stderr)
			}
			var tab struct {
				Rows  []float64 `json:"rows"`
				Cols  []float64 `json:"cols"`
				Cells []struct {
					Row, Col, Value, Min, Max float64
					N                         int
				} `json:"cells"`
			}
			if err := json.Unmarshal([]byte(out), &tab); err != nil {
				t.Fatal(err)
			}
			if len(tab.Rows) != 2 || tab.Rows[0] != 65536 || len(tab.Cols) != 2 || tab.Cols[1] != 2 || len(tab.Cells) != 4 {
				t.Fatalf("table %s", out)
			}
			sums := map[[2]float64]float64{}
			for _, r := range runs {
				sums[[2]float64{r.Axes["window"].(float64), r.Axes["parallel"].(float64)}] += r.Summary["received_bits_per_second"]
			}
			for _, c := range tab.Cells {
				want := sums[[2]float64{c.Row, c.Col}] / 2
				if c.N != 2 || c.Min > c.Value || c.Value > c.Max || abs(c.Value-want) > want*1e-9 {
					t.Errorf("cell %+v, want the mean %g of 2 runs", c, want)
				}
			}
			for _, format := range []string{"text", "markdown", "csv"} {
				code, out, _ := runCLI("table", "--db", db, "--campaign", "grid", "--rows", "window", "--cols", "parallel", "--format", format)
				if code != 0 || !strings.Contains(out, "window") || strings.Count(out, "\n") < 3 {
					t.Errorf("table --format %s: exit %d\n%s", format, code, out)
				}
			}

			// show -J is the document byte for byte; show is the client's report.
			code, out, _ = runCLI("show", "--db", db, runs[0].ID[:8], "-J")
			var doc map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc["end"] == nil || doc["wireperf"] == nil {
				t.Errorf("show -J: exit %d\n%.300s", code, out)
			}
			code, out, _ = runCLI("show", "--db", db, runs[0].ID)
			if code != 0 || !strings.Contains(out, "[SUM]") && !strings.Contains(out, "sender") {
				t.Errorf("show: exit %d\n%s", code, out)
			}
			hostState(t, db, runs[0].ID)
		})
	}
}

// hostState checks that a run has both hosts' CPU and memory in use
// beside it, and both hosts' limits.
func hostState(t *testing.T, db, id string) {
	t.Helper()
	s, err := archive.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	mem := map[string]bool{}
	lastT := map[string]float64{}
	for _, h := range r.Hosts {
		hosts[h.Host]++
		if h.T <= lastT[h.Host] {
			t.Errorf("%s host sample at %v s after one at %v s", h.Host, h.T, lastT[h.Host])
		}
		lastT[h.Host] = h.T
		if h.MemUsed != nil && *h.MemUsed > 0 {
			mem[h.Host] = true
		}
		if h.CPUUser == nil || h.CPUSys == nil || h.CPUSoftIRQ == nil {
			t.Errorf("host sample without CPU: %+v", h)
		}
	}
	// Both ends sample their host (per interval of a second or more, and
	// at the end): a series each, however short.
	if hosts["local"] == 0 || hosts["remote"] == 0 || !mem["local"] || !mem["remote"] {
		t.Errorf("host state %+v", r.Hosts)
	}
	if len(r.Limits) != 2 || !strings.Contains(r.Limits[0].Limits, "rmem_max") || r.Limits[0].Kernel == "" {
		t.Errorf("limits %+v", r.Limits)
	}
	if len(r.Intervals) == 0 {
		t.Error("no intervals stored")
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// A run that fails is stored with its error and retried once at the end,
// and the campaign goes on; a resumed campaign runs only what is missing.
func TestSweepFailedRunsAndResume(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "a.db")
	file := filepath.Join(t.TempDir(), "c.yaml")
	spec := "name: cc\ntarget: 127.0.0.1\nport: " + port + "\norder: sequential\naxes:\n  congestion: [reno, nosuchcc]\nflags:\n  time: 0.2\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("sweep", "-f", file, "--db", db, "-q")
	if code != ExitFailed || !strings.Contains(stderr, "1 run failed twice") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Count(out, "congestion=nosuchcc") != 2 || !strings.Contains(out, "(retry)") {
		t.Errorf("the failed run was not retried once:\n%s", out)
	}
	runs := listRuns(t, "--db", db, "--campaign", "cc")
	if len(runs) != 2 {
		t.Fatalf("%d runs stored", len(runs))
	}
	var good storedRun
	for _, r := range runs {
		switch r.Axes["congestion"] {
		case "reno":
			good = r
			if r.State != "finished" {
				t.Errorf("reno run %+v", r)
			}
		case "nosuchcc":
			if r.State != "failed" || !strings.Contains(r.Error, "nosuchcc") {
				t.Errorf("failed run %+v", r)
			}
		}
	}
	code, out, _ = runCLI("sweep", "--resume", "cc", "--db", db, "--dry-run")
	if code != 0 || !strings.Contains(out, "1 of 2 runs done") || !strings.Contains(out, "nosuchcc") || strings.Contains(out, "reno") {
		t.Errorf("resume dry run: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("sweep", "--resume", "cc", "--db", db)
	if code != ExitFailed || strings.Contains(out, "congestion=reno") || !strings.Contains(out, "1 done before") {
		t.Errorf("resume ran the finished run again or skipped the failed one: exit %d\n%s", code, out)
	}
	after := listRuns(t, "--db", db, "--campaign", "cc")
	for _, r := range after {
		if r.ID == good.ID && r.Start != good.Start {
			t.Errorf("the finished run was rewritten: %s → %s", good.Start, r.Start)
		}
	}
}

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\ntarget: h\naxes:\n  window: [1M]\n  w: [2M]\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "-f", bad, "--db", db}, "bad.yaml:5:3: axes.w"},
		{[]string{"sweep", "h", "--window", "1M,huge", "--name", "x", "--db", db}, "huge"},
		{[]string{"sweep", "h", "--window", "1M", "--db", db}, "--name"},
		{[]string{"sweep", "h", "--spacing", "10us", "--name", "x", "--db", db}, "UDP"},
		{[]string{"sweep", "--resume", "nope", "--db", db}, "no campaign"},
		{[]string{"sweep", "-f", bad, "-P", "1,2", "--db", db}, "--parallel"},
		{[]string{"sweep", "--resume", "x", "--repeat", "3", "--db", db}, "--repeat"},
		{[]string{"table", "--db", db, "--rows", "window", "--format", "xml"}, "--format"},
		{[]string{"show", "--db", db, "ffff"}, "no run"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	code, _, stderr := runCLI("runs", "--db", "postgres://u:hunter2@127.0.0.1:1/x?sslmode=disable")
	if code != ExitFailed || strings.Contains(stderr, "hunter2") || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("unreachable database: exit %d, %q", code, stderr)
	}
}

func TestSweepDryRunRunsNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, _ := runCLI("sweep", "127.0.0.1", "-p", "1", "-w", "64K,1M", "-P", "1,4,16", "-t", "10s,60s", "--repeat", "3",
		"--name", "big", "--pause", "5s", "--order", "sequential", "--db", db, "--dry-run")
	if code != 0 || strings.Count(out, " rep ") != 36 || !strings.Contains(out, "36 runs, estimated") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// 18 runs of 10 s and 18 of 60 s, 1 s overhead each, 35 pauses of 5 s
	if !strings.Contains(out, "estimated 24m31s") {
		t.Errorf("estimate: %s", out[strings.LastIndex(out, "36 runs"):])
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a dry run created the archive")
	}
}

func TestExampleCampaignsPlan(t *testing.T) {
	for _, f := range []string{"../../examples/windows-durations.yaml", "../../examples/windows-streams.yaml"} {
		code, out, stderr := runCLI("sweep", "-f", f, "--dry-run")
		if code != 0 || !strings.Contains(out, "runs, estimated") {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, stderr)
		}
	}
}

// A UDPmon campaign: --count datagrams per run, sizes × spacings.
func TestSweepUDPmonCount(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "-u", "-l", "64,1472", "--spacing", "0,20us",
		"--count", "500", "--name", "udpmon", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	runs := listRuns(t, "--db", db, "--campaign", "udpmon")
	if len(runs) != 4 {
		t.Fatalf("%d runs", len(runs))
	}
	for _, r := range runs {
		length := r.Axes["length"].(float64)
		if r.Axes["proto"] != "udp" || r.Summary["sent_bytes"] != 500*length {
			t.Errorf("run %v: sent %v bytes, want 500 datagrams of %v", r.Axes, r.Summary["sent_bytes"], length)
		}
		if _, ok := r.Summary["lost_percent"]; !ok {
			t.Errorf("run %v has no loss", r.Axes)
		}
	}
	code, _, stderr = runCLI("sweep", "127.0.0.1", "-l", "64", "--count", "5", "--name", "x", "--db", db)
	if code != ExitUsage || !strings.Contains(stderr, "-u") {
		t.Errorf("--count without -u: exit %d %s", code, stderr)
	}
}

// A request-response campaign: --rr, the length axis as the request size.
func TestSweepRR(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "--rr", "-l", "64,512", "--proto", "udp,tcp",
		"-t", "0.2", "--name", "rr", "--db", db)
	if code != 0 || !strings.Contains(out, "p99") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	runs := listRuns(t, "--db", db, "--campaign", "rr")
	if len(runs) != 4 {
		t.Fatalf("%d runs", len(runs))
	}
	for _, r := range runs {
		if r.Summary["rr_p50_us"] <= 0 || r.Summary["rr_p99_us"] < r.Summary["rr_p50_us"] || r.Source != "native" {
			t.Errorf("rr run %v: %v", r.Axes, r.Summary)
		}
	}
	code, out, _ = runCLI("show", "--db", db, runs[0].ID)
	if code != 0 || !strings.Contains(out, "p99") {
		t.Errorf("show of an rr run: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("table", "--db", db, "--campaign", "rr", "--rows", "length", "--cols", "proto", "--value", "rr_p99_us", "--format", "csv")
	if code != 0 || strings.Count(out, "\n") != 5 {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	code, _, stderr = runCLI("sweep", "127.0.0.1", "--rr", "-P", "1,2", "--name", "bad", "--db", db)
	if code != ExitUsage || !strings.Contains(stderr, "parallel") {
		t.Errorf("an axis rr lacks: exit %d %s", code, stderr)
	}
}

// The plan's estimate counts each run's whole length: -t, and -O before
// it, as iperf3 runs them.
func TestSweepEstimateCountsOmit(t *testing.T) {
	code, out, stderr := runCLI("sweep", "127.0.0.1", "-t", "2s,4s", "--name", "est", "--dry-run", "--", "-O", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	// (2+3) + (4+3) s of tests, and the 1 s each run takes beyond its test.
	if !strings.Contains(out, "2 runs, estimated 14s") {
		t.Errorf("want 2 runs, estimated 14s:\n%s", out)
	}
}

// TestSweepCappedWindows: a window above this host's rmem_max is granted
// what the limit is; the plan says so before the sweep, and the table
// after it, from the limits the runs reported.
func TestSweepCappedWindows(t *testing.T) {
	l, _ := hostmon.ReadLimits()
	limit := min(l.RmemMax, l.WmemMax)
	if limit <= 0 || limit > 64<<20 {
		t.Skipf("net.core.rmem_max/wmem_max %d/%d: unknown or too large to sweep past here", l.RmemMax, l.WmemMax)
	}
	big := strconv.FormatInt(2*limit, 10)
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "w.db")
	args := []string{"sweep", "127.0.0.1", "-p", port, "-w", "64K," + big, "-t", "0.2", "--name", "capped", "--db", db}
	code, plan, _ := runCLI(append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(plan, "NOTE on this host: -w ") || !strings.Contains(plan, "so the kernel grants") {
		t.Fatalf("dry run: exit %d\n%s", code, plan)
	}
	if code, out, stderr := runCLI(args...); code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ := runCLI("table", "--db", db, "--campaign", "capped", "--rows", "window")
	if code != 0 || !strings.Contains(out, "NOTE: -w ") || !strings.Contains(out, "their results repeat that window's") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("table", "--db", db, "--campaign", "capped", "--rows", "time")
	if code != 0 || strings.Contains(out, "NOTE") {
		t.Errorf("a table without the window axis: exit %d\n%s", code, out)
	}
}
