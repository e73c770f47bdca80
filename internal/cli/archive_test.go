package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// Bad input to archive prune and keep: one line, exit 2, the archive as
// it was.
func TestArchivePruneBadInput(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "wireperf.db")
	store, err := archive.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().AddDate(-2, 0, 0)
	if err := store.PutRun(ctx, &archive.Run{ID: "old", State: archive.StateFinished, Source: archive.SourceNative, Started: old, Recorded: old}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"archive", "prune", "--db", db}, "needs --older-than"},
		{[]string{"archive", "prune", "--db", db, "--older-than", "23h"}, "under a day"},
		{[]string{"archive", "prune", "--db", db, "--older-than", "0d"}, "under a day"},
		{[]string{"archive", "prune", "--db", db, "--older-than", "soon"}, "invalid age"},
		{[]string{"archive", "prune", "--db", db, "--older-than", "400d", "extra"}, "unknown command"},
		{[]string{"archive", "prune", "--db", filepath.Join(t.TempDir(), "none.db"), "--older-than", "400d"}, "none.db"},
		{[]string{"archive", "keep", "--db", db}, "name the campaigns"},
		{[]string{"archive", "keep", "--db", db, "no-such"}, `no campaign "no-such"`},
		{[]string{"archive"}, "say prune or keep"},
	} {
		code, out, stderr := runCLI(tc.args...)
		if code != ExitUsage || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", tc.args, code, out, stderr, ExitUsage, tc.want)
		}
	}
	store, err = archive.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Get(ctx, "old"); err != nil {
		t.Errorf("after the refused prunes the old run is gone: %v", err)
	}
}

// A dry run says what would go; a prune removes it; a kept campaign's
// runs stay.
func TestArchivePruneAndKeep(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "wireperf.db")
	store, err := archive.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "study", Spec: "x", SpecFormat: "yaml"}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().AddDate(-2, 0, 0)
	for _, r := range []*archive.Run{
		{ID: "old", State: archive.StateFinished, Source: archive.SourceNative, Started: old, Recorded: old},
		{ID: "study-old", Campaign: "study", State: archive.StateFinished, Source: archive.SourceNative, Started: old, Recorded: old},
	} {
		if err := store.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	if code, out, stderr := runCLI("archive", "keep", "--db", db, "study"); code != ExitOK || out != "campaign study: kept\n" {
		t.Fatalf("keep: exit %d, %q %q", code, out, stderr)
	}
	code, out, stderr := runCLI("archive", "prune", "--db", db, "--older-than", "400d", "--dry-run")
	if code != ExitOK || !strings.HasPrefix(out, "would remove 1 runs started before ") || !strings.Contains(out, "kept 1 older runs of kept campaigns\n") {
		t.Fatalf("dry run: exit %d, %q %q", code, out, stderr)
	}
	code, out, stderr = runCLI("archive", "prune", "--db", db, "--older-than", "400d")
	if code != ExitOK || !strings.HasPrefix(out, "removed 1 runs started before ") {
		t.Fatalf("prune: exit %d, %q %q", code, out, stderr)
	}
	if code, out, _ := runCLI("archive", "keep", "--db", db, "--unkeep", "study"); code != ExitOK || out != "campaign study: no longer kept\n" {
		t.Fatalf("unkeep: exit %d, %q", code, out)
	}
	store, err = archive.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Get(ctx, "old"); err == nil {
		t.Error("the old run is still there after the prune")
	}
	if _, err := store.Get(ctx, "study-old"); err != nil {
		t.Errorf("the kept campaign's run went: %v", err)
	}
	if kept, err := store.KeptCampaigns(ctx); err != nil || len(kept) != 0 {
		t.Errorf("kept after --unkeep: %q, %v", kept, err)
	}
}
