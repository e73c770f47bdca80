package logimport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

// A log is stored once: each run is said as it is stored, and the same
// file again is skipped naming the run it gave. What is not a log says
// why.
func TestImport(t *testing.T) {
	ctx := context.Background()
	store, err := archive.Open(ctx, archivetest.Backends(t)["sqlite"])
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	path := filepath.Join("testdata", "iperf2-client-tcp-p2.txt")
	var out strings.Builder
	n, err := Import(ctx, store, path, &out)
	if err != nil || n == 0 {
		t.Fatalf("%d runs, %v", n, err)
	}
	if got := strings.Count(out.String(), "imported "+path+": run "); got != n {
		t.Errorf("%d runs stored, %d said:\n%s", n, got, out.String())
	}
	runs, err := store.List(ctx, archive.Filter{})
	if err != nil || len(runs) != n {
		t.Fatalf("the archive holds %d runs (%v), want %d", len(runs), err, n)
	}
	out.Reset()
	if n, err := Import(ctx, store, path, &out); !errors.Is(err, ErrImportedBefore) || n != 0 ||
		!strings.HasPrefix(out.String(), "skipped "+path+": imported before (run "+runs[0].ID) {
		t.Errorf("the same file again: %d, %v, %q", n, err, out.String())
	}

	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var nl *NotLogError
	if _, err := Import(ctx, store, empty, &out); !errors.As(err, &nl) || nl.Reason != "empty" {
		t.Errorf("an empty file: %v", err)
	}
	if _, err := Import(ctx, store, filepath.Join(t.TempDir(), "missing"), &out); err == nil || errors.As(err, &nl) {
		t.Errorf("a missing file: %v", err)
	}
}
