package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner"
)

// udpmonFlags are the udpmon command's flags: the sweep's (package
// measure) and the command line's own.
type udpmonFlags struct {
	measure.UDPMon
	logfile  string
	noBar    bool
	save     bool
	db       string
	campaign string
	log      logOptions
	security clientSecurity // --auth-key-file, --tls-ca, --tls-pin (security.go)
}

func newUDPMonFlags() *udpmonFlags {
	return &udpmonFlags{UDPMon: *measure.NewUDPMon(), log: logOptions{level: "warn", format: "text"}}
}

func (f *udpmonFlags) register(cmd *cobra.Command) {
	shared := pflag.NewFlagSet("shared", pflag.ContinueOnError)
	f.security.register(shared)
	dbFlagOn(shared, &f.db)
	f.UDPMon.RegisterCommand(cmd.Flags(), measure.Binds{
		"no-progress": &f.noBar,
		"save":        &f.save,
		"campaign":    &f.campaign,
		"logfile":     &f.logfile,
		"log-level":   &f.log.level,
		"log-format":  &f.log.format,
	}, shared)
}

func (f *udpmonFlags) finish() error {
	if err := f.UDPMon.Finish(); err != nil {
		return usageError{err}
	}
	return nil
}

func newUDPMonCmd(e env) *cobra.Command {
	f := newUDPMonFlags()
	cmd := &cobra.Command{
		Use:   "udpmon HOST",
		Short: "Sweep UDP payload size × inter-packet spacing against a wireperf server (UDPmon's method)",
		Long: `udpmon runs one paced UDP test per (size, spacing) point and tabulates, for each, the
achieved spacing, the wire rate sent and received, loss, re-ordering, jitter, relative
one-way delay, both hosts' CPU split and interrupts, and the UDP counters with a verdict
on where lost datagrams were dropped (docs/metrics.md, "UDPmon method").`,
		Example: `  wireperf udpmon host                                  sizes 64..1472, spacings 0..40 µs
  wireperf udpmon host --sizes 1472,512 --spacing 0:40us:1us --count 100000
  wireperf udpmon host --sizes 1472 --spacing 0 -w 4K  a tiny receive buffer: see who drops
  wireperf udpmon host --csv > sweep.csv                 for plotting`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("udpmon needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(); err != nil {
				return err
			}
			return runUDPMon(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func runUDPMon(ctx context.Context, e env, f *udpmonFlags, host string) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	log, out, ctx := rio.log, rio.out, rio.ctx
	if !f.save && (f.campaign != "" || f.db != "") {
		return usagef("--db and --campaign say where --save stores the sweep: give --save")
	}
	if f.save {
		// Before any traffic: the archive opens and the campaign is there.
		if err := checkArchiveFor(ctx, f.db, f.campaign); err != nil {
			return err
		}
	}
	o := runner.Options{Logger: log}
	if err := f.security.applyTo(&o, host); err != nil {
		return err
	}
	sw, runErr := runner.UDPMon(ctx, &f.UDPMon, host, o, out, !f.noBar && isTerminal(out))
	if sw == nil {
		return runErr
	}
	if f.save {
		id, err := runner.SaveUDPMon(ctx, f.db, f.campaign, sw, runErr, os.Args)
		if err != nil {
			return fmt.Errorf("storing the sweep: %w", archiveUsage(err))
		}
		fmt.Fprintf(e.stderr, "udpmon: stored as run %s\n", id)
	}
	return runErr
}
