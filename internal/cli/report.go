package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/report"
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
	p := report.Page{Generated: time.Now(), Version: version.String()}
	var names []string
	switch {
	case f.campaign != "":
		if err := requireCampaign(ctx, store, f.campaign); err != nil {
			return err
		}
		names = []string{f.campaign}
		p.Title = "wireperf report: campaign " + f.campaign
	case f.run != "":
		r, err := store.Get(ctx, f.run)
		if err != nil {
			if errors.Is(err, archive.ErrNotFound) {
				return usagef("no run %q in %s (runs: %s)", f.run, archive.Redact(store.DSN()), recentRunIDs(ctx, store))
			}
			return err
		}
		p.Title = "wireperf report: run " + r.ID
		if err := os.MkdirAll(f.output, 0o755); err != nil {
			return err
		}
		p.Sections = []report.Section{reportarchive.Run(r, f.output)}
	default:
		names, err = reportarchive.CampaignsSince(ctx, store, time.Now().Add(-f.since))
		if err != nil {
			return err
		}
		p.Title = fmt.Sprintf("wireperf report: campaigns of the last %s", f.since)
		if len(names) == 0 {
			p.Empty = fmt.Sprintf("No campaign has runs started in the last %s.", f.since)
		}
	}
	if err := os.MkdirAll(f.output, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		s, err := reportarchive.Campaign(ctx, store, name, f.output)
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, s)
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, p); err != nil {
		return err
	}
	out := filepath.Join(f.output, "index.html")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
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
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.After(runs[j].Started) })
	var ids []string
	for i, r := range runs {
		if i == 10 {
			ids = append(ids, fmt.Sprintf("and %d more", len(runs)-10))
			break
		}
		ids = append(ids, r.ID)
	}
	return listOrNone(ids)
}
