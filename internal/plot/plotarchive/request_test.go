package plotarchive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/plot"
)

// A request that cannot be drawn as asked is a RequestError, found by
// Check before anything is read.
func TestCheckRefusesRequests(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Kind: "pie", Output: "x.svg"}, "plot pie: unknown figure; choose one of sweep, heatmap"},
		{Request{Kind: "timeline"}, "say where to write the figure"},
		{Request{Kind: "timeline", Output: "x.gif"}, "x.gif"},
		{Request{Kind: "timeline", Output: "x.svg", Args: []string{"a"}}, `plot timeline takes no arguments after KIND (got ["a"])`},
		{Request{Kind: "timeline", Output: "x.svg", X: "window"}, "choose a campaign's axes for sweep and heatmap"},
		{Request{Kind: "sweep", Output: "x.svg", Run: "r"}, "give --campaign NAME, not --from or --run"},
		{Request{Kind: "sweep", Output: "x.svg", Campaign: "c"}, "give the axis along x with --x AXIS"},
		{Request{Kind: "sweep", Output: "x.svg", Campaign: "c", X: "window", Value: "nope"}, `--value "nope": want one of`},
		{Request{Kind: "sweep", Output: "x.svg", Campaign: "c", X: "window", Y: "parallel"}, "plot sweep takes --series AXIS, not --y"},
		{Request{Kind: "heatmap", Output: "x.svg", Campaign: "c", X: "window"}, "plot heatmap needs --y AXIS"},
		{Request{Kind: "heatmap", Output: "x.svg", Campaign: "c", X: "wind", Y: "parallel"}, `--x "wind": not a campaign axis`},
		{Request{Kind: "compare", Output: "x.svg", Args: []string{"heatmap"}}, "plot compare needs the figure to compare"},
		{Request{Kind: "compare", Output: "x.svg", Args: []string{"latency"}, From: []string{"a"}}, "give two or more --from FILE"},
		{Request{Kind: "udpmon", Output: "x.svg", Campaign: "c", Run: "r"}, "give --campaign NAME, --run ID or --from FILE, one of them"},
		{Request{Kind: "latency", Output: "x.svg", Run: "r", From: []string{"a"}}, "give --run ID or --from FILE, not both"},
		{Request{Kind: "latency", Output: "x.svg", Campaign: "c"}, "plot latency draws one run"},
		{Request{Kind: "latency", Output: "x.svg"}, "plot latency: give one --from FILE"},
	} {
		err := c.r.Check()
		var re *RequestError
		if !errors.As(err, &re) || !IsUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a RequestError with %q", c.r, err, c.want)
		}
	}
	if IsUsage(errors.New("disk full")) || !IsUsage(fmt.Errorf("x: %w", &plot.DocumentError{Msg: "m"})) || !IsUsage(&AxisError{"a"}) {
		t.Error("IsUsage: wrong class")
	}
}

// A request for a stored campaign or run is drawn from the archive, with
// the title asked for; one for a file needs none.
func TestDrawFromTheArchive(t *testing.T) {
	ctx := context.Background()
	db := archivetest.Backends(t)["sqlite"]
	store, err := archive.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "grid", Spec: "x", SpecFormat: "flags", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i, r := range gridRuns() {
		r.ID, r.Campaign, r.Source, r.Started = fmt.Sprintf("r%d", i), "grid", archive.SourceNative, time.Now()
		if err := store.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	r := &Request{Kind: "heatmap", Output: "h.svg", Title: "mine", Campaign: "grid", X: "window", Y: "parallel"}
	if err := r.Check(); err != nil || !r.FromArchive() {
		t.Fatalf("check: %v, from the archive %v", err, r.FromArchive())
	}
	fig, err := r.Draw(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Kind != "heatmap" || fig.Title != "mine" {
		t.Fatalf("drew a %s titled %q", fig.Kind, fig.Title)
	}
	r = &Request{Kind: "timeline", Output: "t.svg", Run: "nope"}
	if err := r.Check(); err != nil || !r.FromArchive() {
		t.Fatalf("check: %v, from the archive %v", err, r.FromArchive())
	}
	if _, err := r.Draw(ctx, store); !errors.Is(err, archive.ErrNotFound) || !IsUsage(err) {
		t.Fatalf("a run the archive lacks: %v, want ErrNotFound as a usage error", err)
	}
	r = &Request{Kind: "timeline", Output: "t.svg", From: []string{"a.json"}}
	if err := r.Check(); err != nil || r.FromArchive() {
		t.Fatalf("a file's figure: %v, from the archive %v", err, r.FromArchive())
	}
	if _, err := (&Request{Kind: "timeline", From: []string{"a.json"}}).Draw(ctx, nil); err == nil {
		t.Fatal("an unchecked request draws")
	}
}
