package logimport

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
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

// Imported logs and native runs share rows: iperf2's "256 KByte" and a
// native -w 256k are one row, 256K; a log's default window is a row of
// its own; -t 2 and a log's 2.0 s span are one column, 2s. An archive of
// client logs alone has no receiver figures, and the table says so.
func TestImportsMixWithNativeRuns(t *testing.T) {
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store, err := archive.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for _, f := range []string{"iperf2-client-tcp-interval.txt", "iperf2-client-tcp-p2.txt"} {
				if _, err := Import(ctx, store, filepath.Join("testdata", f), io.Discard); err != nil {
					t.Fatal(err)
				}
			}
			imported, err := store.List(ctx, archive.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			tab, _, err := archive.Pivot(imported, "window", "time", "received_bits_per_second", archive.StatMean)
			if err != nil {
				t.Fatal(err)
			}
			if want := "2 runs have only sender figures: try --value sent_bits_per_second"; tab.Why != want {
				t.Errorf("why no cells: %q, want %q", tab.Why, want)
			}
			two, window, bps := 2.0, 256.0*1024, 5e9
			native := &archive.Run{ID: "native1", State: archive.StateFinished, Source: archive.SourceNative,
				Axes:    map[string]archive.Axis{"window": {Num: &window, Label: "256k"}, "time": {Num: &two, Label: "2"}},
				Summary: archive.Summary{SentBps: &bps}}
			if err := store.PutRun(ctx, native); err != nil {
				t.Fatal(err)
			}
			runs, err := store.List(ctx, archive.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			tab, _, err = archive.Pivot(runs, "window", "time", "sent_bits_per_second", archive.StatMean)
			if err != nil {
				t.Fatal(err)
			}
			grid := pivotfmt.Grid(tab)
			var rows, cols []string
			for _, line := range grid[1:] {
				rows = append(rows, line[0])
			}
			cols = grid[0][1:]
			if strings.Join(rows, ",") != "256K,default" || strings.Join(cols, ",") != "1s,2s" {
				t.Fatalf("rows %v, columns %v; want 256K and default by 1s and 2s\n%v", rows, cols, grid)
			}
			if c, ok := tab.Cell(0, 1); !ok || c.N != 2 {
				t.Errorf("the 256K cell has %d runs, want the imported and the native one", c.N)
			}
		})
	}
}
