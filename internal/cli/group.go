package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/group"
)

// groupFlags are the group command's flags: the test's (package group)
// and the command line's own.
type groupFlags struct {
	group.Flags
	json    bool
	logfile string
	log     logOptions
}

func newGroupCmd(e env) *cobra.Command {
	f := &groupFlags{Flags: *group.NewFlags(), log: logOptions{level: "warn", format: "text"}}
	cmd := &cobra.Command{
		Use:   "group",
		Short: "One test from several hosts at once: agents start together, one aggregate report",
		Long: `group runs a test on several pairs at once. Each pair is SENDER,RECEIVER: the sender runs
wireperf server --agent --agent-key-file K, the receiver a plain wireperf server. Every
sender connects its streams first; then all start at one instant of this host's clock, each
sender's clock offset measured and added. The report has each pair's result, the sum per
interval on one time base, and the measured start skew.`,
		Example: `  wireperf group --pair a1,b --pair a2,b -t 30 --agent-key-file agent.key
  wireperf group --pair [2001:db8::1]:5201,b:5202 -P 4 -J --agent-key-file agent.key
  wireperf group -f group.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config(cmd.Context(), cmd.Flags())
			if err != nil {
				return usageError{err}
			}
			return runGroup(cmd.Context(), e, f, cfg)
		},
	}
	fs := cmd.Flags()
	f.Register(fs)
	fs.BoolVarP(&f.json, "json", "J", false, "one JSON document: pairs, sum, start_skew")
	fs.StringVar(&f.logfile, "logfile", "", "write the report to this file instead of stdout (appends)")
	fs.StringVar(&f.log.level, "log-level", f.log.level, "log level: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "log format: text or json")
	return cmd
}

func runGroup(ctx context.Context, e env, f *groupFlags, cfg group.Config) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	cfg.Logger = rio.log
	rep := group.Run(rio.ctx, cfg)
	if f.json {
		err = group.WriteJSON(rio.out, rep)
	} else {
		err = group.WriteText(rio.out, rep, f.Format)
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return errors.New(rep.Error)
	}
	return nil
}
