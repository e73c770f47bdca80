package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/campaign"
)

type tableFlags struct {
	sel    selectFlags
	rows   string
	cols   string
	value  string
	stat   string
	format string
}

func newTableCmd(e env) *cobra.Command {
	f := &tableFlags{value: "received_bits_per_second", stat: archive.StatMean, format: "text"}
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
	fs.StringVar(&f.rows, "rows", "", "the axis down the side (required), e.g. window")
	fs.StringVar(&f.cols, "cols", "", "the axis across the top, e.g. parallel")
	fs.StringVar(&f.value, "value", f.value, "the summary value in the cells")
	fs.StringVar(&f.stat, "stat", f.stat, "over repetitions: mean, median, min or max")
	fs.StringVar(&f.format, "format", f.format, "text, csv, json or markdown")
	return cmd
}

func runTable(cmd *cobra.Command, e env, f *tableFlags) error {
	if f.rows == "" {
		return usagef("table needs --rows AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
	}
	if !slices.Contains(pivotfmt.Formats, f.format) {
		return usagef("--format %q: want text, csv, json or markdown", f.format)
	}
	rows, _ := campaign.CanonicalAxis(f.rows)
	cols := f.cols
	if cols != "" {
		cols, _ = campaign.CanonicalAxis(cols)
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
	t, _, err := archive.Pivot(runs, rows, cols, f.value, f.stat)
	if err != nil {
		return usageError{err}
	}
	// JSON and CSV are for programs: no notes after them.
	if err := pivotfmt.Write(e.stdout, t, f.format); err != nil || f.format == "json" || f.format == "csv" {
		return err
	}
	if rows == campaign.AxisWindow || cols == campaign.AxisWindow {
		for _, note := range pivotfmt.CappedWindowNotes(cmd.Context(), store, runs) {
			fmt.Fprintf(e.stdout, "NOTE: %s\n", note)
		}
	}
	return nil
}
