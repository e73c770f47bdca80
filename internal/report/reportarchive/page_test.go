package reportarchive

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// Each selection writes index.html into a directory made for it, titled
// for what it shows.
func TestWrite(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "planned", Spec: "-P 1", SpecFormat: "flags", Created: now}); err != nil {
		t.Fatal(err)
	}
	page := func(sel Selection) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "new", "dir")
		out, err := Write(ctx, store, sel, dir, "v-test")
		if err != nil {
			t.Fatal(err)
		}
		if out != filepath.Join(dir, "index.html") {
			t.Errorf("wrote %s, want index.html in %s", out, dir)
		}
		html, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(html), "v-test") {
			t.Error("the page does not name the version that made it")
		}
		return string(html)
	}
	if html := page(Selection{Campaign: "planned", Now: now}); !strings.Contains(html, "wireperf report: campaign planned") || !strings.Contains(html, "no runs yet") {
		t.Errorf("campaign page lacks its title or its empty section")
	}
	if html := page(Selection{Run: adviseRun(t, "a1"), Now: now}); !strings.Contains(html, "wireperf report: run a1") || !strings.Contains(html, "rmem_max caps the window") {
		t.Errorf("run page lacks its title or its verdict")
	}
	if html := page(Selection{Since: 24 * time.Hour, Now: now}); !strings.Contains(html, "campaigns of the last 24h0m0s") ||
		!strings.Contains(html, "No campaign has runs started in the last 24h0m0s.") {
		t.Errorf("since page lacks its title or says there was something")
	}
}

// A flags campaign's spec reads as the command line it came from, and the
// interactive chart draws series i in the colour the static sweep figure
// beside it does.
func TestPageSpecAndSeriesColours(t *testing.T) {
	store := openStore(t)
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	putGrid(t, store, `{"args":["--name=grid","--window=64K,4M","-P=1,2","host b"]}`, now)
	dir := t.TempDir()
	out, err := Write(context.Background(), store, Selection{Campaign: "grid", Now: now}, dir, "v-test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if want := "<pre class=\"spec\">wireperf sweep --name=grid --window=64K,4M -P=1,2 &#39;host b&#39;</pre>"; !strings.Contains(html, want) {
		t.Errorf("the page lacks the spec as a command line %s", want)
	}
	if strings.Contains(html, "args&#34;") || strings.Contains(html, `{"args"`) {
		t.Error("the page shows the spec's stored JSON")
	}

	m := regexp.MustCompile(`var colours = (\[[^\]]*\]);`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("the page has no series colours")
	}
	var pageColours []string
	if err := json.Unmarshal([]byte(m[1]), &pageColours); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "grid-sweep.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// The series' lines are the strokes that are neither black (frame,
	// ticks) nor grey (grid), in the order they are drawn.
	var svgColours []string
	seen := map[string]bool{}
	for _, sm := range regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`).FindAllStringSubmatch(string(svg), -1) {
		c := strings.ToLower(sm[1])
		if c == "#000000" || c == "#808080" || seen[c] {
			continue
		}
		seen[c] = true
		svgColours = append(svgColours, c)
	}
	if len(svgColours) != 2 || len(pageColours) < 2 {
		t.Fatalf("series colours: %v in the figure, %v in the page; want the 2 series in each", svgColours, pageColours)
	}
	for i, c := range svgColours {
		if !strings.EqualFold(pageColours[i], c) {
			t.Errorf("series %d: %s in the figure, %s in the page", i, c, pageColours[i])
		}
	}
}
