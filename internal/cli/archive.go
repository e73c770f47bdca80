package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archiveview"
)

func newArchiveCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "archive",
		Short: "Look after the archive: prune old runs, keep campaigns",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("say prune or keep")
		},
	}
	cmd.AddCommand(newArchivePruneCmd(e), newArchiveKeepCmd(e))
	return cmd
}

func newArchivePruneCmd(e env) *cobra.Command {
	var db, olderThan string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune --older-than AGE",
		Short: "Remove runs older than AGE, except kept campaigns'",
		Long: `Remove the runs that started more than AGE ago, with what is stored beside them,
the schedule's past runs planned before then and the reservations that ended
before then. The runs of a campaign marked with "wireperf archive keep" stay.
On PostgreSQL a month all of whose runs go is dropped as a whole partition.`,
		Example: `  wireperf archive prune --older-than 400d --dry-run
  wireperf archive prune --older-than 400d`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan == "" {
				return usagef("archive prune needs --older-than AGE, e.g. --older-than 400d")
			}
			age, err := archive.ParseAge(olderThan)
			if err != nil {
				return usageError{fmt.Errorf("--older-than: %w", err)}
			}
			if age < archive.MinPruneAge {
				return usagef("--older-than %s is under a day: prune takes 1d or more", olderThan)
			}
			store, err := openArchiveToPrune(cmd, db)
			if err != nil {
				return err
			}
			defer store.Close()
			return archiveview.Prune(cmd.Context(), e.stdout, store, archive.PruneRequest{OlderThan: age, Now: time.Now(), DryRun: dryRun})
		},
	}
	dbFlag(cmd, &db)
	cmd.Flags().StringVar(&olderThan, "older-than", "", "remove what is older than this: days (400d) or a duration (36h); at least 1d")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would go, remove nothing")
	return cmd
}

// openArchiveToPrune opens an archive that exists: there is nothing to
// prune in one that does not.
func openArchiveToPrune(cmd *cobra.Command, db string) (*archive.Store, error) {
	dsn, err := archive.ResolveDSN(db)
	if err != nil {
		return nil, err
	}
	store, err := archive.OpenExisting(cmd.Context(), dsn)
	if errors.Is(err, archive.ErrNoArchive) {
		return nil, usageError{err}
	}
	return store, archiveUsage(err)
}

func newArchiveKeepCmd(e env) *cobra.Command {
	var db string
	var unkeep bool
	cmd := &cobra.Command{
		Use:   "keep CAMPAIGN...",
		Short: "Keep campaigns' runs from archive prune (--unkeep: no longer)",
		Example: `  wireperf archive keep grid-2026
  wireperf archive keep --unkeep grid-2026`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("name the campaigns to keep")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, names []string) error {
			store, err := openArchiveToPrune(cmd, db)
			if err != nil {
				return err
			}
			defer store.Close()
			for _, name := range names {
				if err := requireCampaign(cmd.Context(), store, name); err != nil {
					return err
				}
			}
			for _, name := range names {
				if err := store.KeepCampaign(cmd.Context(), name, !unkeep); err != nil {
					return err
				}
				if unkeep {
					fmt.Fprintf(e.stdout, "campaign %s: no longer kept\n", name)
				} else {
					fmt.Fprintf(e.stdout, "campaign %s: kept\n", name)
				}
			}
			return nil
		},
	}
	dbFlag(cmd, &db)
	cmd.Flags().BoolVar(&unkeep, "unkeep", false, "no longer keep them: prune removes their old runs")
	return cmd
}

// noArgsUsage refuses arguments as bad usage (exit 2).
func noArgsUsage(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{err}
	}
	return nil
}
