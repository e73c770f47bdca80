package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/race"
)

// TestCommandCellsSubset is the other commands' part of the truth
// matrix that CI runs (the client's is internal/lab's TestTruthSubset):
// the command cells (rr idle and --load, udpmon, advise, sweep, a
// daemon's task and group) once on the lab's 1 ms,
// 1 Gbit/s path, quiet, with the full matrix's checks. It builds the
// binary it runs and needs root; bench/truth.sh runs the rest (19 and
// 215 ms, beside a CPU hog).
func TestCommandCellsSubset(t *testing.T) {
	switch {
	case testing.Short():
		t.Skip("the command cells run about two minutes of tests; skipped with -short")
	case race.Enabled:
		t.Skip("rates checked to 1-2%; skipped under the race detector")
	case os.Geteuid() != 0:
		t.Skip("needs root: network namespaces and TUN devices")
	}
	wp := filepath.Join(t.TempDir(), "wireperf")
	if out, err := exec.Command("go", "build", "-o", wp, "../../cmd/wireperf").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// ping's cell holds its times to the path's bound, which a loaded
	// host's own delay can break with no flag to say so (docs/truth.md):
	// it runs in the full matrix only. tcp-connect's holds the kernel's
	// handshake times to it, and the dials' to a flag naming the client.
	defer func(was string) { onlyCells = was }(onlyCells)
	onlyCells = "rr,udpmon,advise,sweep,daemon,group,tcp-connect"
	began := time.Now()
	failed, err := runPath(ctx, wp, fmt.Sprintf("ts%d", os.Getpid()%1000), path{"1ms", 1e9, "1g"}, false, true)
	t.Logf("the command cells took %.0f s", time.Since(began).Seconds())
	if err != nil {
		t.Fatal(err)
	}
	if failed > 0 {
		t.Errorf("%d command cells failed; their checks are on stderr above", failed)
	}
}
