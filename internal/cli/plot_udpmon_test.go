package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
)

// A UDP sizes × spacings campaign on loopback, stored in the archive and
// drawn as a UDPmon figure: every drawn point is the archive's number for
// its size and spacing, as `wireperf table` pivots it.
func TestPlotUDPMonCampaignFromArchive(t *testing.T) {
	eachArchive(t, plotUDPMonCampaign)
}

// udpmonTable is `wireperf table --rows spacing --cols length` of value,
// by spacing in µs and size in bytes.
func udpmonTable(t *testing.T, db, value string) map[[2]float64]float64 {
	t.Helper()
	code, out, stderr := runCLI("table", "--db", db, "--campaign", "um", "--rows", "spacing", "--cols", "length", "--value", value, "--format", "json")
	if code != ExitOK {
		t.Fatalf("table %s: exit %d: %s", value, code, stderr)
	}
	var tab struct {
		Cells []struct {
			Row, Col, Value float64
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("table -J: %v\n%s", err, out)
	}
	m := map[[2]float64]float64{}
	for _, c := range tab.Cells {
		m[[2]float64{math.Round(c.Row*1e12) / 1e6, c.Col}] = c.Value
	}
	return m
}

// 3,000 datagrams a point: 300 at spacing 0 could arrive in one read
// (GSO and GRO carry 44 at a time), with no span to give a rate over.
func plotUDPMonCampaign(t *testing.T, port, db string) {
	code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "-u", "-l", "512,1472", "--spacing", "0,20us,50us",
		"--count", "3000", "--name", "um", "--order", "sequential", "--db", db, "-q")
	if code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	svg := filepath.Join(t.TempDir(), "u.svg")
	if code, _, stderr := runCLI("plot", "udpmon", "--db", db, "--campaign", "um", "-o", svg); code != ExitOK {
		t.Fatalf("plot udpmon: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(svg)
	for _, want := range []string{"1472 B", "512 B", "campaign um", "Goodput"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	fig, err := udpmonCampaignFigure(t.Context(), db, "um")
	if err != nil {
		t.Fatal(err)
	}
	rate, loss := udpmonTable(t, db, "received_bits_per_second"), udpmonTable(t, db, "lost_percent")
	ooo, sent := udpmonTable(t, db, "out_of_order"), udpmonTable(t, db, "sent_bytes")
	drawn := 0
	for _, size := range []float64{512, 1472} {
		name := strconv.Itoa(int(size)) + " B"
		check := func(panel int, series string, want map[[2]float64]float64, of func(key [2]float64, v float64) float64) {
			s := fig.Panels[panel].Find(series)
			if s == nil {
				t.Fatalf("no series %q", series)
			}
			if len(s.Points) != 3 {
				t.Errorf("series %q: %d points, want one per spacing; the archive's: %v", series, len(s.Points), want)
			}
			for _, p := range s.Points {
				key := [2]float64{math.Round(p.X*1e6) / 1e6, size}
				v, ok := want[key]
				if !ok {
					t.Errorf("series %q: a point at %g µs the archive lacks", series, p.X)
					continue
				}
				if w := of(key, v); math.Abs(p.Y-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("series %q at %g µs: drawn %g, the archive's %g", series, p.X, p.Y, w)
				}
				drawn++
			}
		}
		same := func(_ [2]float64, v float64) float64 { return v }
		check(0, name, rate, same)
		check(1, name+" loss", loss, same)
		check(1, name+" re-ordered", ooo, func(key [2]float64, v float64) float64 { return 100 * v / (sent[key] / size) })
		// The reference curve is the payload's bits over the spacing.
		curve := fig.Panels[0].Find(name + ": size ÷ spacing")
		if curve == nil || len(curve.Points) == 0 {
			t.Fatalf("no 1/t curve for %s", name)
		}
		for _, p := range curve.Points {
			if w := size * 8 / (p.X / 1e6); math.Abs(p.Y-w) > 1e-9*w {
				t.Errorf("curve %s at %g µs: %g, want %g", name, p.X, p.Y, w)
			}
		}
	}
	if drawn != 18 {
		t.Errorf("%d points checked, want 18", drawn)
	}
	// The report of the campaign carries the same figure.
	dir := t.TempDir()
	if code, _, stderr := runCLI("report", "--db", db, "--campaign", "um", "-o", dir); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(page), `src="um-udpmon.svg"`) {
		t.Error("the report does not show the udpmon figure")
	}
	if fig, err := os.ReadFile(filepath.Join(dir, "um-udpmon.svg")); err != nil || !strings.Contains(string(fig), "1472 B") {
		t.Errorf("the report's udpmon figure: %v", err)
	}
}

func TestPlotUDPMonCampaignBadInput(t *testing.T) {
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
		{[]string{"--campaign", "nope"}, `no campaign "nope"`},
		{[]string{"--campaign", "g"}, "has no spacing axis"},
		{[]string{"--campaign", "g", "--from", "x.json"}, "one of them"},
	} {
		args := append([]string{"plot", "udpmon", "--db", db, "-o", out}, tc.args...)
		code, _, stderr := runCLI(args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// udpmon --save stores the sweep as one run; plot udpmon draws it by its
// run and by its campaign, with the stored document's numbers.
func TestUDPMonSaveAndPlot(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "w.db")
	if code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "-P", "1", "-t", "0.1", "--name", "path", "--db", db, "-q"); code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr := runCLI("udpmon", "127.0.0.1", "-p", port, "--sizes", "512,1472", "--spacing", "10us,20us", "--count", "200",
		"--no-progress", "-J", "--save", "--db", db, "--campaign", "path")
	if code != ExitOK {
		t.Fatalf("udpmon: exit %d: %s", code, stderr)
	}
	var id string
	for _, r := range listRuns(t, "--db", db, "--campaign", "path") {
		if len(r.Axes) == 0 {
			id = r.ID
		}
	}
	if id == "" || !strings.Contains(stderr, "stored as run "+id) {
		t.Fatalf("no sweep stored (stderr %q)", stderr)
	}
	var doc struct {
		Sweep struct {
			Points []struct {
				Size        int     `json:"size"`
				SpacingNs   float64 `json:"spacing_ns"`
				AchievedNs  float64 `json:"achieved_spacing_ns"`
				RecvWireBps float64 `json:"recv_wire_bps"`
			} `json:"points"`
		} `json:"sweep"`
	}
	sweep := &doc.Sweep
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(sweep.Points) != 4 {
		t.Fatalf("udpmon -J: %v\n%s", err, out)
	}
	for _, by := range [][]string{{"--run", id}, {"--campaign", "path"}} {
		svg := filepath.Join(t.TempDir(), "u.svg")
		if code, _, stderr := runCLI(append([]string{"plot", "udpmon", "--db", db, "-o", svg}, by...)...); code != ExitOK {
			t.Fatalf("plot udpmon %v: exit %d: %s", by, code, stderr)
		}
	}
	fig, err := udpmonCampaignFigure(t.Context(), db, "path")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sweep.Points {
		s := fig.Panels[0].Find(strconv.Itoa(p.Size) + " B")
		if s == nil {
			t.Fatalf("no series for %d B", p.Size)
		}
		// At the spacing the sender achieved, not the one asked for: a
		// sender that could not hold 10 µs measured the path at its own.
		at := p.AchievedNs / 1000
		if at <= 0 {
			at = p.SpacingNs / 1000
		}
		found := false
		for _, q := range s.Points {
			found = found || math.Abs(q.X-at) < 1e-9*at && q.Y == p.RecvWireBps
		}
		if !found {
			t.Errorf("%d B asked %g µs, achieved %g µs: %g bit/s is not drawn (%v)", p.Size, p.SpacingNs/1000, at, p.RecvWireBps, s.Points)
		}
	}
	if code, _, stderr := runCLI("udpmon", "127.0.0.1", "-p", "9", "--save", "--db", db, "--campaign", "nope"); code != ExitUsage || !strings.Contains(stderr, `no campaign "nope"`) {
		t.Errorf("udpmon --save to an unknown campaign: exit %d, %q", code, stderr)
	}
}

// udpmonCampaignFigure is the figure `wireperf plot udpmon --campaign
// name` draws of the archive db.
func udpmonCampaignFigure(ctx context.Context, db, name string) (*plot.Figure, error) {
	r := &plotarchive.Request{Kind: "udpmon", Output: "u.svg", Campaign: name}
	if err := r.Check(); err != nil {
		return nil, err
	}
	store, err := openArchiveToRead(ctx, db)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return r.Draw(ctx, store)
}
