package archiveview

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// Prune is `wireperf archive prune`: the archive's old runs and the
// schedule's past in its database, in one transaction
// (taskstore.Prune), said on w.
func Prune(ctx context.Context, w io.Writer, store *archive.Store, req archive.PruneRequest) error {
	res, err := taskstore.Prune(ctx, store, req)
	if err != nil {
		return err
	}
	WritePruneResult(w, res, req.DryRun)
	return nil
}

// WritePruneResult says what a prune removed, or would remove.
func WritePruneResult(w io.Writer, r taskstore.PruneResult, dryRun bool) {
	verb, drop := "removed", "dropped"
	if dryRun {
		verb, drop = "would remove", "would drop"
	}
	fmt.Fprintf(w, "%s %d runs started before %s, %d past scheduled runs, %d past reservations\n",
		verb, r.Runs, r.Before.Format(time.RFC3339), r.SchedRuns, r.Reservations)
	if r.KeptRuns > 0 {
		fmt.Fprintf(w, "kept %d older runs of kept campaigns\n", r.KeptRuns)
	}
	if len(r.Partitions) > 0 {
		fmt.Fprintf(w, "%s whole partitions: %s\n", drop, strings.Join(r.Partitions, ", "))
	}
}
