package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
)

// plotFlags are `wireperf plot`'s flags.
type plotFlags struct {
	from   []string
	output string
	title  string
	// The archive's: which campaign or run, and what to draw of it.
	db, campaign, run string
	value, x, y       string
	series            string
	// The probe runs plot probes draws.
	host  string
	since time.Duration
}

func newPlotCmd(e env) *cobra.Command {
	f := &plotFlags{}
	cmd := &cobra.Command{
		Use:   "plot KIND --from FILE | --run ID | --campaign NAME -o FILE.png|.svg",
		Short: "Draw a figure of a run or a campaign as PNG or SVG",
		Long: `plot draws one figure (docs/reports.md):

  sweep      a summary value against one axis of a campaign, one line per value of another
  heatmap    a summary value over two axes of a campaign, each cell labelled
  timeline   goodput per interval, with cwnd, RTT and retransmits (TCP) or loss and jitter (UDP)
  udpmon     a udpmon sweep's rate against spacing, with the 1/t curve; loss and re-ordering below
  latency    an rr run's RTT histogram and CDF, with p50, p99 and p99.9 marked
  load       an rr --load run's RTT across the idle, loaded and after phases
  rrul       an rrul run in flent's layout: goodput down and up per class, RTT over time, RTT CDF
  probes     ping and tcp-connect runs' RTT p50/p99 and loss over time, one colour a pair
  compare    the same figure of two or more runs overlaid: compare KIND --from A --from B

timeline, latency, load, rrul and udpmon draw one run: wireperf's own -J output (--from FILE), or a
run stored in the archive (--run ID). sweep and heatmap draw a campaign from the archive
(--campaign NAME) over its axes (--x, and --series or --y), as wireperf table pivots it;
udpmon also draws a UDP sizes × spacings campaign (--campaign NAME). probes draws the archive's
probe runs (a daemon's ping and tcp-connect tasks) picked by --host, --since and --campaign. The
output's extension picks PNG or SVG.`,
		Example: `  wireperf -c host -t 30 -J > run.json && wireperf plot timeline --from run.json -o t.png
  wireperf rr host --load tcp,4 -J > rr.json && wireperf plot load --from rr.json -o load.svg
  wireperf plot compare latency --from before.json --from after.json -o cmp.png
  wireperf plot sweep --campaign grid --x window --series parallel -o sweep.svg
  wireperf plot heatmap --campaign grid --x window --y parallel -o heatmap.png
  wireperf plot udpmon --campaign cern-udpmon -o udpmon.svg
  wireperf plot probes --host router --since 24h -o probes.png`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("plot needs a KIND: %s", strings.Join(plotarchive.Kinds, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlot(cmd.Context(), e, f, args)
		},
	}
	fs := cmd.Flags()
	fs.Var(filesValue{&f.from}, "from", "a wireperf -J file (client, server, rr or udpmon); give it twice or more for compare")
	fs.StringVarP(&f.output, "output", "o", "", "the image to write: FILE.png or FILE.svg")
	fs.StringVar(&f.title, "title", "", "the figure's title (default: what the run was)")
	// The archive's flags.
	dbFlag(cmd, &f.db)
	fs.StringVar(&f.campaign, "campaign", "", "draw this campaign from the archive")
	fs.StringVar(&f.run, "run", "", "draw this run from the archive")
	fs.StringVar(&f.value, "value", "", "the summary value to draw (sweep, heatmap; default goodput)")
	fs.StringVar(&f.x, "x", "", "the campaign axis along x (sweep, heatmap)")
	fs.StringVar(&f.series, "series", "", "the campaign axis with one line per value (sweep)")
	fs.StringVar(&f.y, "y", "", "the campaign axis along y (heatmap)")
	fs.StringVar(&f.host, "host", "", "only the probe runs this host takes part in (probes)")
	fs.DurationVar(&f.since, "since", 0, "only the probe runs started this long ago or less, e.g. 24h (probes)")
	return cmd
}

func runPlot(ctx context.Context, e env, f *plotFlags, args []string) error {
	r := &plotarchive.Request{
		Kind: args[0], Args: args[1:], Output: f.output, Title: f.title,
		From: f.from, Run: f.run, Campaign: f.campaign,
		Value: f.value, X: f.x, Y: f.y, Series: f.series, Host: f.host,
	}
	if f.since > 0 {
		r.Since = time.Now().Add(-f.since)
	}
	if err := r.Check(); err != nil {
		return usageError{err}
	}
	var store *archive.Store
	if r.FromArchive() {
		var err error
		if store, err = openArchiveToRead(ctx, f.db); err != nil {
			return err
		}
		defer store.Close()
		if r.Campaign != "" {
			if err := requireCampaign(ctx, store, r.Campaign); err != nil {
				return err
			}
		}
	}
	fig, err := r.Draw(ctx, store)
	if plotarchive.IsUsage(err) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if err := fig.Save(f.output); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", f.output)
	return nil
}

// filesValue is a flag that may be given several times, each a file name
// (commas and all, unlike pflag's string slices).
type filesValue struct{ p *[]string }

func (v filesValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ", ")
}
func (v filesValue) Set(s string) error { *v.p = append(*v.p, s); return nil }
func (v filesValue) Type() string       { return "file" }
func (v filesValue) Get() any           { return *v.p }
