// Package cli is wireperf's command line: commands, flags with iperf's
// short names, and exit codes (0 success, 1 the test failed, 2 bad usage).
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/version"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// usageError marks an error the user can fix by changing the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// env is where commands read and write; tests replace it.
type env struct {
	stdout, stderr io.Writer
}

// Main runs the command line and returns the exit code.
func Main(args []string) int {
	return run(args, env{stdout: os.Stdout, stderr: os.Stderr})
}

func run(args []string, e env) int {
	root := newRoot(e)
	root.SetArgs(iperfStyleCompletion(iperfStyle(args)))
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(e.stderr, "wireperf: %s\n", oneLine(err))
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailed
}

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}

func newRoot(e env) *cobra.Command {
	root := &cobra.Command{
		Use:   "wireperf",
		Short: "Measure network paths: TCP throughput, and what limits it",
		Long: `wireperf measures network paths the way iperf does, and explains what it measured.

  wireperf -s                  run a server (port 5201)
  wireperf -c HOST             run a 10-second TCP test against HOST
  wireperf selftest            a server and a client on loopback`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("say what to run: -s, -c HOST, or a command (see --help)")
		},
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newClientCmd(e), newServerCmd(e), newSelftestCmd(e), newAdviseCmd(e), newLabCmd(e), newRRCmd(e), newUDPMonCmd(e), newManCmd(e))
	root.AddCommand(newSweepCmd(e), newRRULCmd(e))
	root.AddCommand(newVersionCmd(e))
	root.AddCommand(newKeyCmd(e))
	root.AddCommand(newRunsCmd(e))
	root.AddCommand(newShowCmd(e))
	root.AddCommand(newTableCmd(e))
	root.AddCommand(newImportCmd(e))
	root.AddCommand(newPlotCmd(e))
	root.AddCommand(newGroupCmd(e))
	root.AddCommand(newReportCmd(e))
	root.AddCommand(newTraceCmd(e))
	root.AddCommand(newPingCmd(e), newTCPConnectCmd(e))
	root.AddCommand(newDaemonCmd(e), newTaskCmd(e), newScheduleCmd(e), newMeshCmd(e))
	root.AddCommand(newArchiveCmd(e))
	addCompletions(root)
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	}
	return root
}

// iperfStyle turns iperf's `-s` and `-c HOST` into our commands, so that
// `wireperf -c host -t 30` means `wireperf client host -t 30`.
func iperfStyle(args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return args
	}
	for i, a := range args {
		switch {
		case a == "--":
			return args
		case a == "-s" || a == "--server":
			return append([]string{"server"}, without(args, i, 1)...)
		case a == "-c" || a == "--client":
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				// No host: the client command says so, rather than
				// the root refusing an unknown flag -c.
				return append([]string{"client"}, without(args, i, 1)...)
			}
			return append([]string{"client", args[i+1]}, without(args, i, 2)...)
		case strings.HasPrefix(a, "--client="):
			return append([]string{"client", strings.TrimPrefix(a, "--client=")}, without(args, i, 1)...)
		case strings.HasPrefix(a, "-c") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			return append([]string{"client", a[2:]}, without(args, i, 1)...)
		}
	}
	return args
}

func without(args []string, i, n int) []string {
	out := append([]string{}, args[:i]...)
	return append(out, args[i+n:]...)
}
