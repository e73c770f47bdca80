package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner"
)

// clientFlags are the client command's flags: the test's (package
// measure) and the command line's own, which name files, keys and the
// archive.
type clientFlags struct {
	measure.Client
	logfile    string
	log        logOptions
	tcpinfoCSV string                 // --tcpinfo-csv (advise.go)
	security   clientSecurity         // --auth-key-file, --tls-ca, --tls-pin (security.go)
	iperf3Auth authflags.Iperf3Client // --username, --rsa-public-key-path, --use-pkcs1-padding: iperf3's credentials
	save       bool                   // --save: store the run in the archive (save.go)
	db         string
}

func newClientFlags() *clientFlags {
	return &clientFlags{Client: *measure.NewClient(), log: logOptions{level: "warn", format: "text"}}
}

func (f *clientFlags) register(cmd *cobra.Command) {
	shared := pflag.NewFlagSet("shared", pflag.ContinueOnError)
	f.security.register(shared)
	f.iperf3Auth.Register(shared)
	dbFlagOn(shared, &f.db)
	f.Client.RegisterCommand(cmd.Flags(), measure.Binds{
		"logfile":     &f.logfile,
		"tcpinfo-csv": &f.tcpinfoCSV,
		"log-level":   &f.log.level,
		"log-format":  &f.log.format,
		"save":        &f.save,
	}, shared)
}

// finish turns the flags into a validated spec.
func (f *clientFlags) finish(cmd *cobra.Command) error {
	if err := f.Client.Finish(cmd.Flags()); err != nil {
		return usageError{err}
	}
	return nil
}

func newClientCmd(e env) *cobra.Command {
	f := newClientFlags()
	cmd := &cobra.Command{
		Use:   "client HOST",
		Short: "Run a test against a wireperf server (also: wireperf -c HOST)",
		Example: `  wireperf -c host                       10 s of TCP, client to server
  wireperf -c host -w 16M -t 1800 -i 15  30 minutes in 15 s intervals, a 16 MiB window
  wireperf -c host -P 4 -R               four streams, server to client
  wireperf -c host --bidir -J            both ways at once, iperf3 JSON`,
		Args: exactlyOneHost,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(cmd); err != nil {
				return err
			}
			return runClient(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

func exactlyOneHost(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return usagef("say which server to test: wireperf -c HOST")
	case 1:
		return nil
	}
	return usagef("client needs exactly one HOST (got %d arguments: %s)", len(args), strings.Join(args, " "))
}

func runClient(ctx context.Context, e env, f *clientFlags, host string) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	log, out, ctx := rio.log, rio.out, rio.ctx
	if f.save && runner.IsMulticast(host) {
		return usagef("--save: a multicast sender has no receiver's figures to store; each receiver prints its own")
	}
	if f.save { // an archive that can't be opened fails before the test, not after it
		if err := checkArchiveFor(ctx, f.db, ""); err != nil {
			return err
		}
	}
	// The test runs (package runner decides the protocol and writes the
	// report) with the key and TLS settings of the command line; a key
	// that can't be read fails the run, which --save stores too.
	o := runner.Options{Logger: log, Notice: func(s string) { fmt.Fprintln(e.stderr, s) }}
	runErr := f.security.applyTo(&o, host)
	if runErr == nil {
		if o.Iperf3Auth, runErr = f.iperf3Auth.Load(); runErr != nil {
			runErr = usageError{runErr}
		}
	}
	if runErr != nil {
		if !f.save {
			return runErr
		}
		id, err := runner.SaveClient(ctx, f.db, nil, runErr, os.Args)
		return saved(e, runErr, id, err)
	}
	res, runErr := runner.ClientReported(ctx, &f.Client, host, o, out, f.tcpinfoCSV)
	if !f.save {
		return runErr
	}
	id, err := runner.SaveClient(ctx, f.db, res, runErr, os.Args)
	return saved(e, runErr, id, err)
}

// saved says which run --save stored a client test as, and returns the
// test's error; or returns both errors when the run could not be stored.
func saved(e env, runErr error, id string, err error) error {
	if err != nil {
		return errors.Join(runErr, fmt.Errorf("saving the run: %w", archiveUsage(err)))
	}
	fmt.Fprintf(e.stderr, "saved as run %s\n", id)
	return runErr
}
