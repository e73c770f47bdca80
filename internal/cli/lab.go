package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/lab"
)

// labRouterCommand, when not empty, is the router process `lab up` starts
// (lab.Config.RouterCommand); empty means this executable's `lab router`.
// Tests point it at their own binary.
var labRouterCommand []string

// labExit ends the process with the exit status of the command `lab exec`
// ran. Tests replace it.
var labExit = os.Exit

func newLabCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "An impairment lab on this machine: two hosts and a WAN emulator in network namespaces",
		Long: `wireperf lab builds a small network on this machine to test against: hosts a and b,
each a network namespace, joined through a router r that emulates a WAN path
(delay, jitter, loss, burst loss, re-ordering, duplication, a rate cap) and counts
exactly what it did to every packet. The lab stays up until "wireperf lab down".
It needs root (network namespaces, veth pairs and TUN devices).

  wireperf lab up wan --rtt 215ms --rate 1g --loss 0.1%
  wireperf lab exec wan b -- wireperf -s
  wireperf lab exec wan a -- wireperf -c 10.77.2.2
  wireperf lab status wan
  wireperf lab down wan`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown lab command %q: want up, exec, status, down or list", args[0])
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return usagef("say what to do: wireperf lab up|exec|status|down|list (see wireperf lab --help)")
		},
	}
	cmd.AddCommand(newLabUpCmd(e), newLabExecCmd(), newLabStatusCmd(e), newLabDownCmd(e), newLabListCmd(e), newLabRouterCmd())
	return cmd
}

// labNameArg accepts exactly one argument, a valid lab name.
func labNameArg(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("want exactly one lab NAME (got %d arguments)", len(args))
	}
	if err := lab.CheckName(args[0]); err != nil {
		return usageError{err}
	}
	return nil
}

func newLabUpCmd(e env) *cobra.Command {
	f := lab.NewUpFlags()
	cmd := &cobra.Command{
		Use:   "up NAME",
		Short: "Build the lab NAME (a ─ r ─ b) and start its router",
		Long: `Build the lab NAME: namespaces for hosts a, r and b, joined a ─ r ─ b, with the WAN
emulator running in r as a background process. Each setting applies to each
direction (the delay is half the RTT each way). Rates and sizes take k, m, g
(powers of 10) and K, M, G (powers of 2); probabilities are "0.1%" or "0.001".`,
		Example: `  wireperf lab up wan --rtt 215ms --rate 1g --loss 0.1% --reorder 0.5%
  wireperf lab up lossy --rtt 40ms --jitter 1ms --burst-loss 1%,30% --rand-start 7`,
		Args: labNameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Config(cmd.Flags())
			if err != nil {
				return usageError{err}
			}
			cfg.RouterCommand = labRouterCommand
			if err := lab.NeedRoot("up"); err != nil {
				return err
			}
			info, err := lab.Up(args[0], cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(e.stdout, info.NextSteps("wireperf"))
			return err
		},
	}
	f.Register(cmd.Flags())
	return cmd
}

func newLabExecCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec NAME a|b|r -- COMMAND [ARG...]",
		Short: "Run a command inside host a, b or r of the lab NAME",
		Example: `  wireperf lab exec wan b -- wireperf -s
  wireperf lab exec wan a -- wireperf -c 10.77.2.2 -t 30`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 2 && args[2] == "--" {
				args = append(args[:2:2], args[3:]...)
			}
			if len(args) < 2 {
				return usagef("want NAME, a host (a, b or r) and a command")
			}
			if err := lab.CheckName(args[0]); err != nil {
				return usageError{err}
			}
			if h := args[1]; !lab.IsHostName(h) {
				return usagef("host %q: want a, b or r (or s, a1…aN with --senders)", h)
			}
			if len(args) < 3 {
				return usagef("say what to run in %s: wireperf lab exec %s %s -- COMMAND", args[1], args[0], args[1])
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 2 && args[2] == "--" {
				args = append(args[:2:2], args[3:]...)
			}
			if err := lab.NeedRoot("exec"); err != nil {
				return err
			}
			err := lab.Exec(args[0], args[1], args[2:])
			code, exited := lab.ExitStatus(err)
			if !exited {
				return err
			}
			// The command's own status is the answer; it already said why.
			labExit(code)
			return fmt.Errorf("%s exited with status %d", args[2], code)
		},
	}
	// Everything after the host belongs to the command, flags included.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func newLabStatusCmd(e env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show the lab's settings and what its router did, per direction",
		Args:  labNameArg,
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := lab.Status(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			return st.WriteText(e.stdout)
		},
	}
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "print the status as JSON")
	return cmd
}

func newLabDownCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "down NAME",
		Short: "Stop the lab's router and remove its namespaces and files",
		Args:  labNameArg,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := lab.NeedRoot("down"); err != nil {
				return err
			}
			if err := lab.Down(args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(e.stdout, "lab %q is down\n", args[0])
			return err
		},
	}
}

func newLabListCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the labs that are up",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("lab list takes no arguments")
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return lab.WriteList(e.stdout)
		},
	}
}

// newLabRouterCmd is the router process that `lab up` starts in the
// background; people do not run it.
func newLabRouterCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:    "router --name NAME",
		Short:  "Run the router of the lab NAME (started by lab up)",
		Hidden: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("lab router takes --name NAME and no arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usagef("lab router needs --name NAME")
			}
			if err := lab.CheckName(name); err != nil {
				return usageError{err}
			}
			if err := lab.NeedRoot("router"); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return lab.RouterMain(ctx, name)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the lab's name")
	return cmd
}
