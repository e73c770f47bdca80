package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
)

// sweepFlags are the sweep command's flags: what the campaign is
// (package campaign's flags form) and where and how it runs.
type sweepFlags struct {
	spec     *campaign.Flags
	file     string
	dryRun   bool
	resume   string
	db       string
	quiet    bool
	log      logOptions
	progress bool // set by the command: stdout is a terminal and not --quiet
}

func newSweepCmd(e env) *cobra.Command {
	f := &sweepFlags{spec: campaign.NewFlags(), log: logOptions{level: "warn", format: "text"}}
	cmd := &cobra.Command{
		Use:   "sweep [HOST] [--AXIS LIST]... [-- CLIENT-FLAGS]",
		Short: "Run a campaign: the cross-product of axes, repeated, stored in the archive",
		Long: `sweep runs a campaign of client tests: every combination of the axes given, each a
comma list, repeated, in a shuffled order whose key is recorded. Every run is stored in the
archive (--db) under an ID made from the campaign, the point and the repetition, so that
--resume NAME runs only what is missing. Client flags after -- apply to every run.
See docs/campaigns.md for the file form (-f).`,
		Example: `  wireperf sweep host --window 64K,1M,16M -P 1,4,16 -t 10s,60s --repeat 3 --name grid
  wireperf sweep host -u -l 64,512,1472 --spacing 0,10us,20us --name udpmon -- -i 0
  wireperf sweep -f examples/windows-streams.yaml --dry-run
  wireperf sweep --resume grid`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.progress = !f.quiet && isTerminal(e.stdout)
			return runSweep(cmd, e, f, args)
		},
	}
	fs := cmd.Flags()
	f.spec.Register(fs)
	fs.StringVarP(&f.file, "file", "f", "", "read the campaign from this YAML file")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan and its estimated time; run nothing")
	fs.StringVar(&f.resume, "resume", "", "resume the stored campaign NAME: run only what is missing")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar (the result lines still print)")
	dbFlag(cmd, &f.db)
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	return cmd
}

func runSweep(cmd *cobra.Command, e env, f *sweepFlags, args []string) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var store *archive.Store
	openStore := func() error {
		if store != nil {
			return nil
		}
		s, err := openArchive(ctx, f.db)
		store = s
		return err
	}
	defer func() {
		if store != nil {
			store.Close()
		}
	}()

	var spec *campaign.Spec
	var text, format string
	var err error
	switch {
	case f.resume != "":
		if f.file != "" || len(args) > 0 {
			return usagef("--resume takes the campaign from the archive: give no HOST or -f")
		}
		if changed := campaign.ChangedFlag(cmd.Flags()); changed != "" {
			return usagef("--%s: --resume runs the campaign as it was stored", changed)
		}
		if err := openStore(); err != nil {
			return err
		}
		c, err := store.GetCampaign(ctx, f.resume)
		if errors.Is(err, archive.ErrNotFound) {
			names, _ := store.Campaigns(ctx)
			return usagef("no campaign %q in %s (campaigns: %s)", f.resume, store.DSN(), strings.Join(names, ", "))
		}
		if err != nil {
			return err
		}
		spec, err = campaign.FromStored(c)
		if err != nil {
			err = fmt.Errorf("campaign %s: the stored spec: %w", c.Name, err)
			if campaign.IsFlagError(err) {
				return usageError{err}
			}
			return err
		}
		spec.ShuffleKey = c.ShuffleKey
		text, format = c.Spec, c.SpecFormat
	case f.file != "":
		if changed := campaign.ChangedFlag(cmd.Flags()); changed != "" {
			return usagef("--%s: the campaign comes from %s; set it there", changed, f.file)
		}
		data, err := readFileAtMost(f.file, campaign.MaxFileSize)
		if err != nil {
			return usagef("%v", err)
		}
		spec, err = campaign.ParseFile(f.file, data)
		if err != nil {
			return usageError{err}
		}
		if len(args) > 0 {
			return usagef("-f takes the target from the file: give no HOST")
		}
		text, format = string(data), "yaml"
	default:
		spec, err = f.spec.Spec(cmd.Flags(), args, cmd.ArgsLenAtDash())
		if err != nil {
			return usageError{err}
		}
		text, format = campaign.StoredArgs(cmd.Flags(), args, cmd.ArgsLenAtDash()), "flags"
	}
	runs := spec.Plan()
	// Every point's test must parse before anything runs.
	tests, err := campaign.Tests(spec, runs)
	if err != nil {
		return usageError{err}
	}
	// A run's length is its point's own, as its test's model tells it.
	length := campaign.Length(tests)
	if f.dryRun && f.resume == "" {
		if spec.Order == campaign.OrderShuffle && spec.ShuffleKey == 0 {
			fmt.Fprintln(e.stdout, "(the order shown is one shuffle; a real run picks and records its own shuffle key)")
		}
		campaign.PrintPlan(e.stdout, spec, runs, length)
		return nil
	}
	if err := openStore(); err != nil {
		return err
	}
	if spec.ShuffleKey == 0 {
		spec.ShuffleKey = campaign.NewShuffleKey()
	}
	stored, err := store.PutCampaign(ctx, archive.Campaign{Name: spec.Name, Spec: text, SpecFormat: format, ShuffleKey: spec.ShuffleKey})
	if err != nil {
		return err
	}
	if stored.Spec != text || stored.SpecFormat != format {
		return usagef("campaign %q is already stored with another spec: choose another --name, or --resume %s", spec.Name, spec.Name)
	}
	// Planned again with the key that is recorded, so that the order run
	// is the order a resume, or anyone reading the archive, recomputes.
	spec.ShuffleKey = stored.ShuffleKey
	// A campaign stored when an upper-case rate was a power of 1024 sends
	// what it sent then (docs/campaigns.md).
	if _, err := campaign.KeepStoredRates(spec, stored.RateRule); err != nil {
		return err
	}
	runs = spec.Plan()
	if tests, err = campaign.Tests(spec, runs); err != nil {
		return usageError{err}
	}
	length = campaign.Length(tests)
	rio, err := startRun(ctx, e, f.log, "")
	if err != nil {
		return err
	}
	defer rio.done()
	if !f.dryRun {
		// Held before the runs still missing are read, so that no other
		// sweep runs them meanwhile.
		release, err := campaign.Hold(ctx, store, spec.Name, rio.log)
		if err != nil {
			return err
		}
		defer release()
	}
	states, err := store.States(ctx, spec.Name)
	if err != nil {
		return err
	}
	todo := campaign.Missing(runs, func(id string) bool { return states[id] == archive.StateFinished })
	if f.dryRun {
		fmt.Fprintf(e.stdout, "%d of %d runs done; left:\n", len(runs)-len(todo), len(runs))
		campaign.PrintPlan(e.stdout, spec, todo, length)
		return nil
	}
	rec := &campaign.Recorder{Spec: spec, Store: store, Tests: tests, Logger: rio.log,
		Notice: func(m string) { fmt.Fprintln(e.stderr, m) }}
	p := &campaign.Progress{Out: e.stdout, Spec: spec, Total: len(runs), Todo: todo, Tests: tests, Bar: f.progress}
	p.Start(rio.ctx, store.DSN())
	x := campaign.Executor{Pause: spec.Pause, Recorder: rec, Begin: p.Begin, Done: p.Done}
	return p.Finish(x.Execute(rio.ctx, todo))
}
