package cli

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
)

// Two sweeps of one campaign at once would run its missing runs twice:
// the second is refused, naming the first, and runs once the first has
// let go.
func TestSweepOneAtATime(t *testing.T) {
	eachArchive(t, func(t *testing.T, port, db string) {
		ctx := context.Background()
		st, err := archive.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		release, err := campaign.Hold(ctx, st, "held", slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := campaign.Hold(ctx, st, "held", slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "being run by another sweep") {
			t.Fatalf("a second hold: %v, want refused", err)
		}
		args := []string{"sweep", "127.0.0.1", "-p", port, "-P", "1,2", "-t", "0.2", "--name", "held", "--db", db, "-q"}
		code, out, stderr := runCLI(args...)
		if code == 0 || !strings.Contains(stderr, "being run by another sweep") || strings.Contains(out, " rep ") {
			t.Fatalf("a sweep of a held campaign: exit %d, ran:\n%s\n%s", code, out, stderr)
		}
		if runs := listRuns(t, "--db", db, "--campaign", "held"); len(runs) != 0 {
			t.Fatalf("the refused sweep stored %d runs", len(runs))
		}
		// Another campaign in the same archive is not held.
		if _, err := campaign.Hold(ctx, st, "other", slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("another campaign: %v", err)
		}
		release()
		code, out, stderr = runCLI(args...)
		if code != 0 || strings.Count(out, " rep ") != 2 {
			t.Fatalf("after the release: exit %d\n%s\n%s", code, out, stderr)
		}
	})
}
