package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archiveview"
	"github.com/wireperf/wireperf/internal/report/reportarchive"
	"github.com/wireperf/wireperf/internal/version"
)

type reportFlags struct {
	db string
	reportarchive.Flags
}

func newReportCmd(e env) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report --campaign NAME | --run ID | --since DURATION -o DIR",
		Short: "Write one self-contained HTML page (DIR/index.html) of a campaign, a run or a day's campaigns",
		Example: `  wireperf report --campaign grid -o grid-report
  wireperf report --run 3f2a9c -o run-report
  wireperf report --since 24h -o today`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReport(cmd.Context(), e, f)
		},
	}
	dbFlag(cmd, &f.db)
	f.Register(cmd.Flags())
	return cmd
}

func runReport(ctx context.Context, e env, f *reportFlags) error {
	if err := f.Check(); err != nil {
		return usageError{err}
	}
	store, err := openArchiveToRead(ctx, f.db)
	if err != nil {
		return err
	}
	defer store.Close()
	sel := reportarchive.Selection{Campaign: f.Campaign, Since: f.Since, Now: time.Now()}
	switch {
	case f.Campaign != "":
		if err := requireCampaign(ctx, store, f.Campaign); err != nil {
			return err
		}
	case f.Run != "":
		if sel.Run, err = store.Get(ctx, f.Run); err != nil {
			if errors.Is(err, archive.ErrNotFound) {
				return usagef("no run %q in %s (runs: %s)", f.Run, archive.Redact(store.DSN()), recentRunIDs(ctx, store))
			}
			return err
		}
	}
	out, err := reportarchive.Write(ctx, store, sel, f.Output, version.String())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", out)
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// recentRunIDs names up to ten stored runs, newest first.
func recentRunIDs(ctx context.Context, store *archive.Store) string {
	runs, _ := store.List(ctx, archive.Filter{})
	return listOrNone(archiveview.RecentRunIDs(runs))
}
