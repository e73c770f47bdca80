package cli

import (
	"context"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/runrecord"
	"github.com/wireperf/wireperf/internal/result"
)

// saveRun stores one test outside any campaign (a client's --save):
// runrecord.Test makes the record. runErr is the test's error, stored
// with a failed run.
func saveRun(ctx context.Context, db string, res *result.Result, runErr error, cmdline []string) (string, error) {
	rec, err := runrecord.Test(res, runErr, cmdline, time.Now())
	if err != nil {
		return "", err
	}
	return rec.ID, storeRun(ctx, db, rec)
}

// storeRun stores one run (runrecord.Store); a --db with an unknown
// scheme is bad usage.
func storeRun(ctx context.Context, db string, rec *archive.Run) error {
	return archiveUsage(runrecord.Store(ctx, db, rec))
}

// checkArchiveFor opens the archive that --save stores into, and checks
// the campaign named to hold the run, before any test runs.
func checkArchiveFor(ctx context.Context, db, campaign string) error {
	store, err := openArchive(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()
	if campaign == "" {
		return nil
	}
	return requireCampaign(ctx, store, campaign)
}
