package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archiveview"
)

type tableFlags struct {
	sel selectFlags
	archiveview.Table
}

func newTableCmd(e env) *cobra.Command {
	f := &tableFlags{Table: archiveview.Table{Value: "received_bits_per_second", Stat: archive.StatMean, Format: "text"}}
	cmd := &cobra.Command{
		Use:   "table --rows AXIS [--cols AXIS]",
		Short: "Pivot stored runs into a table: a summary value over two axes, across repetitions",
		Example: `  wireperf table --campaign grid --rows window --cols parallel
  wireperf table --campaign grid --rows window --cols time --stat median --format markdown
  wireperf table --where source=iperf2-text --rows window --cols parallel --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTable(cmd, e, f)
		},
	}
	f.sel.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.Rows, "rows", "", "the axis down the side (required), e.g. window")
	fs.StringVar(&f.Cols, "cols", "", "the axis across the top, e.g. parallel")
	fs.StringVar(&f.Value, "value", f.Value, "the summary value in the cells")
	fs.StringVar(&f.Stat, "stat", f.Stat, "over repetitions: mean, median, min or max")
	fs.StringVar(&f.Format, "format", f.Format, "text, csv, json or markdown")
	return cmd
}

func runTable(cmd *cobra.Command, e env, f *tableFlags) error {
	if err := f.Check(); err != nil {
		return usageError{err}
	}
	sel, err := f.sel.selection(time.Now())
	if err != nil {
		return err
	}
	filter := sel.Filter
	store, err := openArchiveToRead(cmd.Context(), f.sel.db)
	if err != nil {
		return err
	}
	defer store.Close()
	if filter.Campaign != "" {
		if _, err := store.GetCampaign(cmd.Context(), filter.Campaign); err != nil {
			names, _ := store.Campaigns(cmd.Context())
			return usagef("no campaign %q in %s (campaigns: %s)", filter.Campaign, store.DSN(), strings.Join(names, ", "))
		}
	}
	all, err := store.List(cmd.Context(), filter)
	if err != nil {
		return err
	}
	runs := sel.Keep(all)
	t, err := f.Pivot(runs)
	if err != nil {
		return usageError{err}
	}
	return f.Write(cmd.Context(), e.stdout, store, t, runs)
}
