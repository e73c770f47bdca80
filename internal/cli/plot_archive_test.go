package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A real campaign on loopback, stored in a SQLite archive, drawn as a
// sweep and a heatmap; the heatmap's cells read back from its SVG are the
// numbers `wireperf table` prints for the same pivot.
func TestPlotCampaignFromArchive(t *testing.T) {
	eachArchive(t, plotCampaign)
}

func plotCampaign(t *testing.T, port, db string) {
	dir := t.TempDir()
	code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "--window", "64K,256K", "-P", "1,2", "-t", "0.2",
		"--repeat", "2", "--name", "grid", "--db", db, "--", "-i", "0.1")
	if code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	sweep := filepath.Join(dir, "s.svg")
	if code, _, stderr := runCLI("plot", "sweep", "--db", db, "--campaign", "grid", "--x", "window", "--series", "parallel", "-o", sweep); code != ExitOK {
		t.Fatalf("plot sweep: exit %d: %s", code, stderr)
	}
	heat := filepath.Join(dir, "h.svg")
	if code, _, stderr := runCLI("plot", "heatmap", "--db", db, "--campaign", "grid", "--x", "window", "--y", "parallel", "-o", heat); code != ExitOK {
		t.Fatalf("plot heatmap: exit %d: %s", code, stderr)
	}
	png := filepath.Join(dir, "h.png")
	if code, _, stderr := runCLI("plot", "heatmap", "--db", db, "--campaign", "grid", "--x", "window", "--y", "parallel", "-o", png); code != ExitOK {
		t.Fatalf("plot heatmap png: exit %d: %s", code, stderr)
	}
	checkPNG(t, png)
	// One stored run drawn from its -J document.
	runs := listRuns(t, "--db", db, "--campaign", "grid")
	timeline := filepath.Join(dir, "t.png")
	if code, _, stderr := runCLI("plot", "timeline", "--db", db, "--run", runs[0].ID, "-o", timeline); code != ExitOK {
		t.Fatalf("plot timeline --run: exit %d: %s", code, stderr)
	}
	checkPNG(t, timeline)
	if code, _, stderr := runCLI("plot", "latency", "--db", db, "--run", runs[0].ID, "-o", timeline); code != ExitUsage || !strings.Contains(stderr, "needs an rr -J run") {
		t.Errorf("plot latency of a bulk run: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("plot", "timeline", "--db", db, "--run", "nosuchrun", "-o", timeline); code != ExitUsage || !strings.Contains(stderr, "nosuchrun") {
		t.Errorf("plot timeline of an unknown run: exit %d, %q", code, stderr)
	}
	s, _ := os.ReadFile(sweep)
	for _, want := range []string{"parallel 1", "parallel 2", "64 KBytes", "256 KBytes", "campaign grid"} {
		if !strings.Contains(string(s), want) {
			t.Errorf("the sweep's SVG lacks %q", want)
		}
	}

	code, out, stderr = runCLI("table", "--db", db, "--campaign", "grid", "--rows", "parallel", "--cols", "window", "--format", "json")
	if code != ExitOK {
		t.Fatalf("table: exit %d: %s", code, stderr)
	}
	var table struct {
		Cells []struct{ Value float64 } `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &table); err != nil || len(table.Cells) != 4 {
		t.Fatalf("table -J: %v\n%s", err, out)
	}
	h, _ := os.ReadFile(heat)
	svg := string(h)
	m := regexp.MustCompile(`Cells: Goodput \((\w+)/sec\)`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("the heatmap does not name its unit")
	}
	div := map[string]float64{"bits": 1, "Kbits": 1e3, "Mbits": 1e6, "Gbits": 1e9, "Tbits": 1e12}[m[1]]
	var labels []float64
	for _, tm := range regexp.MustCompile(`>([0-9.]+)</text>`).FindAllStringSubmatch(svg, -1) {
		if v, err := strconv.ParseFloat(tm[1], 64); err == nil {
			labels = append(labels, v*div)
		}
	}
	for _, c := range table.Cells {
		found := false
		for _, l := range labels {
			if math.Abs(l-c.Value) <= 0.006*c.Value {
				found = true
			}
		}
		if !found {
			t.Errorf("the table's cell %g bit/s is not labelled in the heatmap (labels %v)", c.Value, labels)
		}
	}
}

func TestPlotCampaignBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	port := strconv.Itoa(startServer(t))
	if code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "--window", "64K", "-P", "1,2", "-t", "0.1", "--name", "g", "--db", db); code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	out := filepath.Join(dir, "f.svg")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--campaign", "nope", "--x", "window", "--series", "parallel"}, `no campaign "nope"`},
		{[]string{"--campaign", "g", "--x", "bogus", "--series", "parallel"}, "not a campaign axis"},
		{[]string{"--campaign", "g", "--x", "bitrate", "--series", "parallel"}, `axis "bitrate"`},
		{[]string{"--campaign", "g", "--x", "window", "--series", "parallel", "--value", "speed"}, "--value"},
	} {
		args := append([]string{"plot", "sweep", "--db", db, "-o", out}, tc.args...)
		code, _, stderr := runCLI(args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
