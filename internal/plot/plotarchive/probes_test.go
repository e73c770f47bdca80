package plotarchive

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/plot"
)

// The probes figure draws the archive's ping and tcp-connect runs as a
// daemon stores them (parsed from their -J documents), one series a pair:
// each run's stored p50 and p99 on the RTT panel and its loss below, at
// its start; runs of other kinds, unfinished runs and runs outside the
// host or time asked for are not drawn.
func TestProbesFigureFromArchivedRuns(t *testing.T) {
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store, err := archive.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			put := func(id, src, state string, at time.Time, doc map[string]any) {
				t.Helper()
				b, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				p, err := archive.ParseDocument(b)
				if err != nil {
					t.Fatal(err)
				}
				r := &archive.Run{ID: id, Source: archive.SourceNative, State: state, LocalHost: src, RemoteHost: p.RemoteHost,
					Started: at, Ended: at.Add(5 * time.Second), Document: b, DocumentFormat: archive.FormatJSON,
					Summary: p.Summary, Axes: p.Axes}
				if err := store.PutRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			ping := func(target string, at time.Time, p50, p99 float64, received int) map[string]any {
				return map[string]any{"ping": map[string]any{"target": target, "started": at, "ended": at.Add(5 * time.Second),
					"sent": 10, "received": received, "size": 56,
					"rtt_us": map[string]any{"count": received, "min": p50 / 2, "mean": p50, "p50": p50, "p90": p99, "p99": p99, "max": p99}}}
			}
			connect := func(target string, at time.Time, p50, p99 float64, connected, refused int) map[string]any {
				return map[string]any{"tcp_connect": map[string]any{"target": target, "started": at, "ended": at.Add(5 * time.Second),
					"attempts": 4, "connected": connected, "refused": refused,
					"connect_us": map[string]any{"count": connected, "min": p50, "mean": p50, "p50": p50, "p90": p99, "p99": p99, "max": p99}}}
			}
			for i, v := range []struct{ p50, p99 float64 }{{1200, 4100}, {1300, 5200}, {2500, 9000}} {
				put("ping"+string(rune('0'+i)), "a", archive.StateFinished, t0.Add(time.Duration(i)*10*time.Minute), ping("router", t0, v.p50, v.p99, 10-i))
			}
			put("connect0", "b", archive.StateFinished, t0.Add(5*time.Minute), connect("router:53", t0, 300, 700, 4, 0))
			put("connect1", "b", archive.StateFinished, t0.Add(15*time.Minute), connect("router:53", t0, 0, 0, 0, 4)) // all refused: no times
			// Not drawn: a failed probe run, an rr run, a probe of another
			// host, and one before --since.
			put("failed", "a", archive.StateFailed, t0.Add(12*time.Minute), ping("router", t0, 9e6, 9e6, 1))
			if err := store.PutRun(ctx, &archive.Run{ID: "rr", Source: archive.SourceNative, State: archive.StateFinished, LocalHost: "a",
				RemoteHost: "router", Started: t0.Add(3 * time.Minute), Summary: archive.Summary{RRp50us: f64(40), RRp99us: f64(90)}}); err != nil {
				t.Fatal(err)
			}
			put("elsewhere", "a", archive.StateFinished, t0.Add(4*time.Minute), ping("dns", t0, 800, 900, 10))
			put("early", "a", archive.StateFinished, t0.Add(-2*time.Hour), ping("router", t0, 7e5, 8e5, 10))

			req := &Request{Kind: "probes", Output: filepath.Join(t.TempDir(), "probes.png"), Host: "router", Since: t0.Add(-time.Minute)}
			if err := req.Check(); err != nil || !req.FromArchive() {
				t.Fatalf("check: %v, from the archive %v", err, req.FromArchive())
			}
			fig, err := req.Draw(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			if len(fig.Panels) != 2 || fig.Kind != "probes" || !strings.Contains(fig.Footer.Subject, "router") {
				t.Fatalf("figure %q with %d panels, footer %q; want RTT and loss", fig.Kind, len(fig.Panels), fig.Footer.Subject)
			}
			if x := fig.Panels[1].Plot.X.Label.Text; !strings.Contains(x, "minutes") || !strings.Contains(x, "2026-12-06 12:00 UTC") {
				t.Errorf("time axis %q: want minutes since the first run", x)
			}
			rtt, loss := fig.Panels[0], fig.Panels[1]
			want := map[string][]plot.Point{
				"a → router (icmp) p50":   {{X: 0, Y: 1200}, {X: 10, Y: 1300}, {X: 20, Y: 2500}},
				"a → router (icmp) p99":   {{X: 0, Y: 4100}, {X: 10, Y: 5200}, {X: 20, Y: 9000}},
				"b → router:53 (tcp) p50": {{X: 5, Y: 300}},
				"b → router:53 (tcp) p99": {{X: 5, Y: 700}},
			}
			for name, pts := range want {
				if s := rtt.Find(name); s == nil || !slices.Equal(s.Points, pts) {
					t.Errorf("RTT series %s: %+v, want %v", name, s, pts)
				}
			}
			if len(rtt.Series) != len(want) {
				t.Errorf("RTT panel has %d series, want %d: %+v", len(rtt.Series), len(want), rtt.Series)
			}
			wantLoss := map[string][]plot.Point{
				"a → router (icmp)":   {{X: 0, Y: 0}, {X: 10, Y: 10}, {X: 20, Y: 20}},
				"b → router:53 (tcp)": {{X: 5, Y: 0}, {X: 15, Y: 100}},
			}
			for name, pts := range wantLoss {
				if s := loss.Find(name); s == nil || !slices.Equal(s.Points, pts) {
					t.Errorf("loss series %s: %+v, want %v", name, s, pts)
				}
			}
			if len(loss.Series) != len(wantLoss) {
				t.Errorf("loss panel has %d series, want %d", len(loss.Series), len(wantLoss))
			}
			if err := fig.Save(req.Output); err != nil {
				t.Fatal(err)
			}

			// Nothing picked: a plain error naming the selection.
			none := &Request{Kind: "probes", Output: req.Output, Host: "nowhere"}
			if err := none.Check(); err != nil {
				t.Fatal(err)
			}
			if _, err := none.Draw(ctx, store); err == nil || !strings.Contains(err.Error(), "no finished ping or tcp-connect runs") {
				t.Errorf("no runs: %v", err)
			}
		})
	}
}

// --host and --since pick a probes figure's runs and nothing else's;
// probes takes none of the other figures' sources.
func TestProbesRequestChecks(t *testing.T) {
	for _, r := range []*Request{
		{Kind: "timeline", Output: "x.png", Run: "r1", Host: "a"},
		{Kind: "sweep", Output: "x.png", Campaign: "c", X: "window", Since: time.Now()},
		{Kind: "probes", Output: "x.png", Run: "r1"},
		{Kind: "probes", Output: "x.png", From: []string{"f.json"}},
		{Kind: "probes", Output: "x.png", X: "window"},
	} {
		var re *RequestError
		if err := r.Check(); err == nil || !IsUsage(err) || !errors.As(err, &re) {
			t.Errorf("%+v: %v, want a RequestError", r, err)
		}
	}
}
