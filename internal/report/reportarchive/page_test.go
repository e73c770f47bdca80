package reportarchive

import (
	"context"
	"os"
	"path/filepath"
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
