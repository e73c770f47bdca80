package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/archive"
)

// dbFlag is --db, shared by the commands that use the archive.
func dbFlag(cmd *cobra.Command, p *string) { dbFlagOn(cmd.Flags(), p) }

// dbFlagOn is --db on a flag set.
func dbFlagOn(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "db", "", "archive: a file path, sqlite:PATH or postgres://USER@HOST:PORT/DB (default $"+archive.EnvDSN+", else $XDG_DATA_HOME/wireperf/wireperf.db)")
}

// openArchive opens the archive that --db, $WIREPERF_DB or the default
// names, creating it if need be: for the commands that store. Its errors
// name the DSN without the password.
func openArchive(ctx context.Context, flag string) (*archive.Store, error) {
	dsn, err := archive.ResolveDSN(flag)
	if err != nil {
		return nil, err
	}
	store, err := archive.Open(ctx, dsn)
	return store, archiveUsage(err)
}

// openArchiveToRead opens the archive as openArchive does, for the
// commands that only read it: one that does not exist is an error, and
// nothing is created.
func openArchiveToRead(ctx context.Context, flag string) (*archive.Store, error) {
	dsn, err := archive.ResolveDSN(flag)
	if err != nil {
		return nil, err
	}
	store, err := archive.OpenExisting(ctx, dsn)
	if errors.Is(err, archive.ErrNoArchive) {
		return nil, usageError{fmt.Errorf("%w; this command only reads an archive: sweep, import or --save create one", err)}
	}
	return store, archiveUsage(err)
}

// archiveUsage marks a DSN with an unknown scheme as bad usage.
func archiveUsage(err error) error {
	if errors.Is(err, archive.ErrUnknownScheme) {
		return usageError{err}
	}
	return err
}

// requireCampaign fails in one line, naming the campaigns there are,
// when the archive holds no campaign of that name.
func requireCampaign(ctx context.Context, store *archive.Store, name string) error {
	if _, err := store.GetCampaign(ctx, name); err != nil {
		names, _ := store.Campaigns(ctx)
		return usagef("no campaign %q in %s (campaigns: %s)", name, archive.Redact(store.DSN()), listOrNone(names))
	}
	return nil
}
