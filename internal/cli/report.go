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
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/report/reportarchive"
	"github.com/wireperf/wireperf/internal/version"
)

type reportFlags struct {
	db       string
	campaign string
	run      string
	since    time.Duration
	output   string
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
	fs := cmd.Flags()
	fs.StringVar(&f.campaign, "campaign", "", "the campaign to report")
	fs.StringVar(&f.run, "run", "", "the run to report")
	fs.Var(flagvalue.Duration(&f.since), "since", "every campaign with runs started this long ago or less, e.g. 24h")
	fs.StringVarP(&f.output, "output", "o", "", "the directory to write index.html and its figures into (required)")
	return cmd
}

func runReport(ctx context.Context, e env, f *reportFlags) error {
	given := 0
	for _, set := range []bool{f.campaign != "", f.run != "", f.since > 0} {
		if set {
			given++
		}
	}
	if given != 1 {
		return usagef("report needs exactly one of --campaign NAME, --run ID or --since DURATION")
	}
	if f.output == "" {
		return usagef("report needs -o DIR")
	}
	store, err := openArchiveToRead(ctx, f.db)
	if err != nil {
		return err
	}
	defer store.Close()
	sel := reportarchive.Selection{Campaign: f.campaign, Since: f.since, Now: time.Now()}
	switch {
	case f.campaign != "":
		if err := requireCampaign(ctx, store, f.campaign); err != nil {
			return err
		}
	case f.run != "":
		if sel.Run, err = store.Get(ctx, f.run); err != nil {
			if errors.Is(err, archive.ErrNotFound) {
				return usagef("no run %q in %s (runs: %s)", f.run, archive.Redact(store.DSN()), recentRunIDs(ctx, store))
			}
			return err
		}
	}
	out, err := reportarchive.Write(ctx, store, sel, f.output, version.String())
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
