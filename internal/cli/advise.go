package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/advise/guide"
	"github.com/wireperf/wireperf/internal/lab"
)

// adviseFlags are `wireperf advise`'s flags: the measurement's (package
// guide) and the command line's own.
type adviseFlags struct {
	guide.Flags
	json     bool
	save     bool
	db       string
	campaign string
	log      logOptions
}

func newAdviseCmd(e env) *cobra.Command {
	f := &adviseFlags{Flags: *guide.NewFlags(), log: logOptions{level: "warn", format: "text"}}
	cmd := &cobra.Command{
		Use:   "advise HOST",
		Short: "Find what limits TCP to a wireperf server, and say what to change",
		Long: `advise runs a short guided measurement against a wireperf server: the idle RTT, the path
MTU and MSS, both hosts' buffer limits, a single-stream and a multi-stream test with TCP_INFO.
It then names the limit (receiver window, sender buffer, congestion or loss, the network itself,
CPU, or the application) and prints the change to make, with numbers.`,
		Example: `  wireperf advise host                       client → server
  wireperf advise host --bottleneck 1g       the path's narrowest link is 1 Gbit/s
  wireperf advise host -R -J                 server → client, as JSON
  wireperf advise host --save --campaign g   store the report with campaign g's runs`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("advise needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Config(args[0])
			if err != nil {
				return usageError{err}
			}
			if !f.save && (f.campaign != "" || cmd.Flags().Changed("db")) {
				return usagef("--db and --campaign say where --save stores the report: give --save")
			}
			return runAdvise(cmd.Context(), e, f, cfg, os.Args)
		},
	}
	fs := cmd.Flags()
	f.Register(fs)
	fs.BoolVarP(&f.json, "json", "J", false, "the report as JSON")
	fs.BoolVar(&f.save, "save", false, "store the report (verdict, evidence, advice and its tests) in the archive (see --db)")
	fs.StringVar(&f.campaign, "campaign", "", "with --save: store the report with this campaign's runs (it must exist)")
	dbFlag(cmd, &f.db)
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "diagnostic log format: text or json")
	return cmd
}

func runAdvise(ctx context.Context, e env, f *adviseFlags, cfg guide.Config, cmdline []string) error {
	log, err := f.log.logger(e.stderr)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if f.save {
		// Before any traffic: the archive opens and the campaign is there.
		if err := checkArchiveFor(ctx, f.db, f.campaign); err != nil {
			return err
		}
	}
	cfg.Logger = log
	if !f.json {
		cfg.Progress = func(step string) { fmt.Fprintf(e.stderr, "advise: %s\n", step) }
	}
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	before, beforeErr := router.Counts(time.Now(), 0)
	rep, err := guide.Run(ctx, cfg)
	if err != nil {
		return err
	}
	rep.Warnings, rep.Lab = append(rep.Warnings, router.BehindLines(time.Now())...), router.Line()
	if after, err := router.Counts(time.Now(), lab.RouterWait); beforeErr == nil && err == nil {
		// The data's direction is the one that carried more packets.
		b, a := before.AtoB, after.AtoB
		if after.BtoA.In-before.BtoA.In > a.In-b.In {
			b, a = before.BtoA, after.BtoA
		}
		if a.In >= b.In && a.Queue >= b.Queue && a.Lost-a.Queue >= b.Lost-b.Queue { // else the router restarted
			queue := a.Queue - b.Queue
			rep.NotePathDrops(fmt.Sprintf("the router of lab %q", router.Name()), queue, a.Lost-b.Lost-queue)
		}
	}
	doc, err := rep.JSON()
	if err != nil {
		return err
	}
	if f.json {
		_, err = e.stdout.Write(doc)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil || !f.save {
		return err
	}
	id, err := guide.Save(ctx, f.db, f.campaign, rep, doc, cmdline)
	if err != nil {
		return fmt.Errorf("storing the advise report: %w", archiveUsage(err))
	}
	fmt.Fprintf(e.stderr, "advise: stored as run %s\n", id)
	return nil
}
