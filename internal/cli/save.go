package cli

import (
	"context"
)

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
