package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
)

// dbFlag is --db, shared by the commands that use the archive.
func dbFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "db", "", "archive: a file path, sqlite:PATH or postgres://USER@HOST:PORT/DB (default $"+archive.EnvDSN+", else $XDG_DATA_HOME/wireperf/wireperf.db)")
}

// openArchive opens the archive that --db, $WIREPERF_DB or the default
// names. Its errors name the DSN without the password.
func openArchive(ctx context.Context, flag string) (*archive.Store, error) {
	dsn, err := archive.ResolveDSN(flag)
	if err != nil {
		return nil, err
	}
	return archive.Open(ctx, dsn)
}
