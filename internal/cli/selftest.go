package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/runner"
)

// newSelftestCmd runs a server and a client on loopback in one process
// and checks that what was sent arrived.
func newSelftestCmd(e env) *cobra.Command {
	f := newClientFlags()
	f.Spec.Duration = 3e9
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Run a server and a client on loopback and check the result",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.finish(cmd); err != nil {
				return err
			}
			return selftest(cmd.Context(), e, f)
		},
	}
	f.register(cmd)
	return cmd
}

func selftest(ctx context.Context, e env, f *clientFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.save { // an archive that can't be opened fails before the test, not after it
		if err := checkArchiveFor(ctx, f.db, ""); err != nil {
			return err
		}
	}
	out, closeOut, err := openOutput(f.logfile, e.stdout)
	if err != nil {
		return err
	}
	defer closeOut()
	res, err := runner.SelfTest(ctx, &f.Client, runner.ClientEmitter(&f.Client, out), f.tcpinfoCSV)
	if err != nil {
		return err
	}
	if !f.JSON && !f.JSONStream {
		fmt.Fprintln(out, "selftest passed: every byte sent arrived, and both ends agree")
	}
	if f.save {
		id, err := runner.SaveClient(ctx, f.db, res, nil, os.Args)
		if err != nil {
			return fmt.Errorf("saving the run: %w", archiveUsage(err))
		}
		fmt.Fprintf(e.stderr, "saved as run %s\n", id)
	}
	return nil
}
