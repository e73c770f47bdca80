package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner"
)

// rrFlags are the rr command's flags: the test's (package measure) and
// the command line's own.
type rrFlags struct {
	measure.RR
	logfile  string
	log      logOptions
	security clientSecurity // --auth-key-file, --tls-ca, --tls-pin (security.go)
}

func newRRFlags() *rrFlags {
	return &rrFlags{RR: *measure.NewRR(), log: logOptions{level: "warn", format: "text"}}
}

func (f *rrFlags) register(cmd *cobra.Command) {
	shared := pflag.NewFlagSet("shared", pflag.ContinueOnError)
	f.security.register(shared)
	f.RR.RegisterCommand(cmd.Flags(), measure.Binds{
		"logfile":    &f.logfile,
		"log-level":  &f.log.level,
		"log-format": &f.log.format,
	}, shared)
}

// finish turns the flags into a validated spec.
func (f *rrFlags) finish(cmd *cobra.Command) error {
	if err := f.RR.Finish(cmd.Flags()); err != nil {
		return usageError{err}
	}
	return nil
}

func newRRCmd(e env) *cobra.Command {
	f := newRRFlags()
	cmd := &cobra.Command{
		Use:   "rr HOST",
		Short: "Measure request-response latency against a wireperf server (UDPmon's req_resp, netperf's *_RR)",
		Example: `  wireperf rr host                          5 s of 64-byte UDP ping-pong
  wireperf rr host --sizes 64,512,1472      a sweep of request sizes
  wireperf rr host --tcp --response-size 8K  64-byte requests, 8 KiB answers on TCP
  wireperf rr host --crr --count 10000      a new connection per transaction
  wireperf rr host --interval 10ms -t 60    isochronous probes for a minute
  wireperf rr host --busy-poll              spin instead of blocking, for the lowest latency
  wireperf rr host --load tcp,4             RTT idle, under 4 TCP streams, and after
  wireperf rr host --load udp,1,down,500m   the same under a 500 Mbit/s UDP flow`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("rr needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(cmd); err != nil {
				return err
			}
			return runRR(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

func runRR(ctx context.Context, e env, f *rrFlags, host string) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	log, out, ctx := rio.log, rio.out, rio.ctx
	o := runner.Options{Logger: log}
	if err := f.security.applyTo(&o, host); err != nil {
		return err
	}
	if f.Load == "" {
		// The probes run on one locked thread, and the rest of the client
		// is idle. With more Ps, each response that wakes the probe's
		// thread also wakes the runtime's monitor (a second context switch
		// per transaction, measured with perf stat); one P avoids it and
		// leaves the CPUs to the probe and the kernel.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	res, runErr := runner.RR(ctx, &f.RR, host, o)
	if res == nil {
		return runErr
	}
	if werr := runner.WriteRR(&f.RR, res, out); runErr == nil && werr != nil {
		runErr = fmt.Errorf("writing the report: %w", werr)
	}
	return runErr
}
