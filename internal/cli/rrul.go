package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/runner"
)

// rrulFlags are the rrul command's flags. RRUL is flent's test, no
// iperf flag: its options are its own, declared here in one place.
type rrulFlags struct {
	runner.RRUL
	logfile  string
	save     bool
	db       string
	log      logOptions
	security clientSecurity // --auth-key-file, --tls-ca, --tls-pin (security.go)
}

func (f *rrulFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVarP(&f.Port, "port", "p", f.Port, "server port")
	fs.DurationVar(&f.Idle, "idle", f.Idle, "how long the probes run alone before the load (flent's delay)")
	fs.DurationVarP(&f.Load, "time", "t", f.Load, "how long the eight TCP flows run (flent's length)")
	fs.DurationVar(&f.After, "after", f.After, "how long the probes run alone after the load")
	fs.DurationVar(&f.Step, "step", f.Step, "the time series' step: the flows' interval and the probes' bin")
	fs.StringVarP(&f.Congestion, "congestion", "C", "", "the flows' TCP congestion control, e.g. cubic (default: each sender's host's; the report names it)")
	fs.BoolVarP(&f.JSON, "json", "J", false, "one JSON document: every figure, the series and the latency histograms")
	fs.BoolVar(&f.save, "save", false, "store the run (its -J document) in the archive (see --db)")
	dbFlag(cmd, &f.db)
	fs.StringVar(&f.logfile, "logfile", "", "write the report to this file instead of stdout (appends)")
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "diagnostic log format: text or json")
	f.security.register(fs)
}

func newRRULCmd(e env) *cobra.Command {
	f := &rrulFlags{RRUL: *runner.NewRRUL(), log: logOptions{level: "warn", format: "text"}}
	cmd := &cobra.Command{
		Use:   "rrul HOST",
		Short: "Realtime Response Under Load (flent's RRUL): latency idle and under 4 TCP flows each way, one per DSCP class",
		Long: `rrul runs flent's Realtime Response Under Load against a wireperf server: UDP request-response
probes in the EF, BK and BE classes run alone (--idle), then beside one TCP flow up and one down in
each of the BE, BK, CS5 and EF classes (-t), then alone again (--after), all on one time axis. It
reports each class's goodput both ways and the probes' RTT idle and loaded (p50, p90, p99) with the
difference: the queue the load built (docs/rrul.md). The flows are one bidirectional test of 4
streams each way, each stream marked with its class, so the run holds 4 tests open at the server
at once, as many as a server admits from one client by default.`,
		Example: `  wireperf rrul host                      5 s idle, 60 s loaded, 5 s after (flent's lengths)
  wireperf rrul host --idle 5s -t 10s     a shorter load
  wireperf rrul host -J > rrul.json       then: wireperf plot rrul.json
  wireperf rrul host --save               store it in the archive (wireperf runs, table, show)`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("rrul needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRRUL(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

func runRRUL(ctx context.Context, e env, f *rrulFlags, host string) error {
	if !f.save && f.db != "" {
		return usagef("--db says where --save stores the run: give --save")
	}
	o := runner.Options{}
	if _, err := f.RRUL.Config(host, o); err != nil {
		return usageError{err}
	}
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	ctx = rio.ctx
	o.Logger = rio.log
	if f.save {
		if err := checkArchiveFor(ctx, f.db, ""); err != nil {
			return err
		}
	}
	if err := f.security.applyTo(&o, host); err != nil {
		return err
	}
	res, runErr := runner.RunRRUL(ctx, &f.RRUL, host, o, rio.out)
	if res == nil {
		return runErr
	}
	if f.save {
		id, err := runner.SaveRRUL(ctx, f.db, res, runErr, os.Args)
		if err != nil {
			return fmt.Errorf("storing the run: %w", archiveUsage(err))
		}
		fmt.Fprintf(e.stderr, "rrul: stored as run %s\n", id)
	}
	return runErr
}
