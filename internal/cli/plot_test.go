package cli

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/resultjson"
)

// writeOutput runs the command line and keeps its stdout in a file.
func writeOutput(t *testing.T, path string, args ...string) {
	t.Helper()
	code, out, stderr := runCLI(args...)
	if code != ExitOK {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 400 {
		t.Fatalf("%s: %v: too small", path, b)
	}
}

// A real loopback test's -J output drawn as a timeline: the goodput the
// figure plots is the receiver's per-interval rate that -J printed.
func TestPlotTimelineFromJSON(t *testing.T) {
	dir := t.TempDir()
	port := strconv.Itoa(startServer(t))
	run := filepath.Join(dir, "run.json")
	writeOutput(t, run, "-c", "127.0.0.1", "-p", port, "-t", "1", "-i", "0.25", "--tcpinfo-interval", "50ms", "-b", "200m", "-J")
	for _, out := range []string{"t.png", "t.svg"} {
		code, stdout, stderr := runCLI("plot", "timeline", "--from", run, "-o", filepath.Join(dir, out))
		if code != ExitOK || !strings.Contains(stdout, out) {
			t.Fatalf("plot timeline -o %s: exit %d: %s", out, code, stderr)
		}
	}
	checkPNG(t, filepath.Join(dir, "t.png"))
	svg, err := os.ReadFile(filepath.Join(dir, "t.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cwnd", "RTT (ms)", "run.json", "wireperf "} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	// The axis's unit follows the rates drawn: a linear axis names it
	// ("Goodput (Mbits/sec)"); rates that span decades, as a stalled
	// interval on a loaded machine gives, take a log axis whose ticks
	// carry their own units.
	if !regexp.MustCompile(`Goodput( \([KMG]bits/sec\))?<`).Match(svg) {
		t.Error("the SVG lacks the goodput axis")
	}

	raw, _ := os.ReadFile(run)
	var doc struct {
		Intervals []struct {
			Sum struct {
				Start, End float64
				Receiver   *float64 `json:"receiver_bits_per_second"`
				RStart     float64  `json:"receiver_start"`
				REnd       float64  `json:"receiver_end"`
				Omitted    bool
			} `json:"sum"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	d, err := resultjson.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	in, err := plot.TimelineOf(d.Result, "run.json")
	if err != nil {
		t.Fatal(err)
	}
	got := in.Goodput[0].Points
	if len(got) != len(doc.Intervals) || len(got) < 3 {
		t.Fatalf("%d goodput points for %d intervals", len(got), len(doc.Intervals))
	}
	for i, iv := range doc.Intervals {
		if iv.Sum.Receiver == nil {
			t.Fatalf("interval %d has no receiver rate", i)
		}
		// The receiver's rate, at the middle of the receiver's own span.
		if relDiff(got[i].X, (iv.Sum.RStart+iv.Sum.REnd)/2) > 1e-6 || relDiff(got[i].Y, *iv.Sum.Receiver) > 1e-9 {
			t.Errorf("interval %d: plotted %v, -J says %g bit/s over %g-%g", i, got[i], *iv.Sum.Receiver, iv.Sum.RStart, iv.Sum.REnd)
		}
	}
	if len(in.Cwnd) != 1 || len(in.Cwnd[0].Points) < 10 {
		t.Errorf("a 1 s test with a 50 ms TCP_INFO period: want its timeline, got %v", in.Cwnd)
	}
}

func relDiff(a, b float64) float64 {
	if b == 0 {
		return a
	}
	d := (a - b) / b
	if d < 0 {
		return -d
	}
	return d
}

func TestPlotLatencyAndLoadFromRR(t *testing.T) {
	if testing.Short() {
		t.Skip("latency under load for 2 s")
	}
	dir := t.TempDir()
	port := strconv.Itoa(startServer(t))
	rr := filepath.Join(dir, "rr.json")
	writeOutput(t, rr, "rr", "127.0.0.1", "-p", port, "--load", "tcp,1", "--load-idle", "400ms", "--load-time", "800ms", "--load-after", "300ms", "-J")
	for _, kind := range []string{"latency", "load"} {
		out := filepath.Join(dir, kind+".png")
		if code, _, stderr := runCLI("plot", kind, "--from", rr, "-o", out); code != ExitOK {
			t.Fatalf("plot %s: exit %d: %s", kind, code, stderr)
		}
		checkPNG(t, out)
	}
	// An rr file is not a bulk test's.
	code, _, stderr := runCLI("plot", "timeline", "--from", rr, "-o", filepath.Join(dir, "x.png"))
	if code != ExitUsage || !strings.Contains(stderr, "rr -J output; plot timeline needs a client or server -J output") {
		t.Fatalf("timeline from rr output: exit %d, %q", code, stderr)
	}
}

func TestPlotUDPMonFromJSON(t *testing.T) {
	dir := t.TempDir()
	port := strconv.Itoa(startServer(t))
	sw := filepath.Join(dir, "sweep.json")
	writeOutput(t, sw, "udpmon", "127.0.0.1", "-p", port, "--sizes", "512,1472", "--spacing", "10,20,40", "--count", "500", "--json")
	out := filepath.Join(dir, "u.svg")
	if code, _, stderr := runCLI("plot", "udpmon", "--from", sw, "-o", out); code != ExitOK {
		t.Fatalf("plot udpmon: exit %d: %s", code, stderr)
	}
	svg, _ := os.ReadFile(out)
	for _, want := range []string{"1472 B", "512 B", "size ÷ spacing", "Spacing"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	cmp := filepath.Join(dir, "c.png")
	if code, _, stderr := runCLI("plot", "compare", "udpmon", "--from", sw, "--from", sw, "-o", cmp); code != ExitOK {
		t.Fatalf("plot compare udpmon: exit %d: %s", code, stderr)
	}
	checkPNG(t, cmp)
}

func TestPlotBadUsage(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte(`{"start":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "f.png")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot"}, ExitUsage, "needs a KIND"},
		{[]string{"plot", "pie", "-o", out}, ExitUsage, "unknown figure"},
		{[]string{"plot", "timeline", "--from", junk}, ExitUsage, "-o FILE.png"},
		{[]string{"plot", "timeline", "--from", junk, "-o", "f.pdf"}, ExitUsage, ".png or .svg"},
		{[]string{"plot", "sweep", "-o", out}, ExitUsage, "give --campaign NAME"},
		{[]string{"plot", "sweep", "--from", junk, "-o", out}, ExitUsage, "not --from or --run"},
		{[]string{"plot", "sweep", "--campaign", "g", "-o", out}, ExitUsage, "--x AXIS"},
		{[]string{"plot", "heatmap", "--campaign", "g", "--x", "window", "-o", out}, ExitUsage, "needs --y AXIS"},
		{[]string{"plot", "heatmap", "--campaign", "g", "--x", "window", "--series", "parallel", "-o", out}, ExitUsage, "not --series"},
		{[]string{"plot", "timeline", "-o", out}, ExitUsage, "--from FILE"},
		{[]string{"plot", "timeline", "--x", "window", "--from", junk, "-o", out}, ExitUsage, "for sweep and heatmap"},
		{[]string{"plot", "timeline", "--campaign", "g", "-o", out}, ExitUsage, "--campaign is for sweep, heatmap and udpmon"},
		{[]string{"plot", "timeline", "--run", "abc", "--from", junk, "-o", out}, ExitUsage, "not both"},
		{[]string{"plot", "timeline", "--from", filepath.Join(dir, "missing.json"), "-o", out}, ExitFailed, "no such file"},
		{[]string{"plot", "timeline", "--from", junk, "-o", out}, ExitFailed, "iperf3 document without wireperf"},
		{[]string{"plot", "compare", "timeline", "--from", junk, "-o", out}, ExitUsage, "two or more"},
		{[]string{"plot", "compare", "load", "--from", junk, "--from", junk, "-o", out}, ExitUsage, "one of timeline, latency, udpmon"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line with %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed plot wrote its output")
	}
}
