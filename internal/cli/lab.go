package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/lab/impair"
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

// labNeedRoot says why the lab cannot be managed by this process, or nil.
func labNeedRoot(what string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("wireperf lab %s: %w", what, lab.ErrNeedsLinux)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("wireperf lab %s needs root: the lab creates network namespaces, veth pairs and TUN devices (run it with sudo)", what)
	}
	return nil
}

// labFlags are the settings of `lab up`.
type labFlags struct {
	rtt, jitter time.Duration
	rate        float64
	loss        float64
	reorder     float64
	duplicate   float64
	burst       *impair.GilbertElliott
	queue       int64
	mtu         int
	randStart   uint64
	senders     int
	accessRate  float64
}

// config turns the flags into the lab's configuration, checking what the
// flags alone cannot.
func (f *labFlags) config(cmd *cobra.Command) (lab.Config, error) {
	changed := cmd.Flags().Changed
	if f.mtu < 576 || f.mtu > 65535 {
		return lab.Config{}, usagef("--mtu %d: want 576 to 65535", f.mtu)
	}
	if f.rtt > 2*time.Hour || f.jitter > time.Hour {
		return lab.Config{}, usagef("--rtt %v, --jitter %v: the emulator delays by at most 1h each way", f.rtt, f.jitter)
	}
	if changed("queue") && f.rate == 0 {
		return lab.Config{}, usagef("--queue is the rate cap's queue: give --rate too")
	}
	if changed("queue") && (f.queue < 1 || f.queue > 1<<31-1) {
		return lab.Config{}, usagef("--queue %d: want 1 byte to 2 GiB", f.queue)
	}
	if f.senders < 0 || f.senders > lab.MaxSenders {
		return lab.Config{}, usagef("--senders %d: want 1 to %d", f.senders, lab.MaxSenders)
	}
	if changed("access-rate") && f.senders == 0 {
		return lab.Config{}, usagef("--access-rate caps each sender's access link: give --senders too")
	}
	cfg := lab.Config{
		RTT: f.rtt, Jitter: f.jitter, Rate: f.rate, Loss: f.loss, Reorder: f.reorder,
		MTU: f.mtu, RandStart: f.randStart, RouterCommand: labRouterCommand,
		Senders: f.senders, AccessRate: f.accessRate,
	}
	atob, btoa := cfg.Directions()
	if f.duplicate > 0 || f.burst != nil || changed("queue") {
		for _, d := range []*impair.Config{&atob, &btoa} {
			d.Duplicate = f.duplicate
			if f.burst != nil {
				g := *f.burst
				d.GE = &g
			}
			if changed("queue") {
				d.QueueLimit = int(f.queue)
			}
		}
		cfg.AtoB, cfg.BtoA = &atob, &btoa
	}
	if err := atob.Validate(); err != nil {
		return lab.Config{}, usageError{err}
	}
	return cfg, nil
}

func newLabUpCmd(e env) *cobra.Command {
	f := &labFlags{mtu: 1500}
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
			cfg, err := f.config(cmd)
			if err != nil {
				return err
			}
			if err := labNeedRoot("up"); err != nil {
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
	fs := cmd.Flags()
	fs.Var(flagvalue.Duration(&f.rtt), "rtt", "round-trip delay, half of it each way (e.g. 215ms)")
	fs.Var(flagvalue.Duration(&f.jitter), "jitter", "uniform jitter of ± this on each packet's delay, each way; keeps packet order")
	fs.Var(flagvalue.Rate(&f.rate), "rate", "rate cap each way, bit/s on an Ethernet line (e.g. 1g, 100m); 0 for none")
	fs.Var(labPercentValue{&f.loss}, "loss", "random loss each way (e.g. 0.1%)")
	fs.Var(labPercentValue{&f.reorder}, "reorder", "share of packets held back behind the next one, each way (e.g. 0.5%)")
	fs.Var(labPercentValue{&f.duplicate}, "duplicate", "share of packets sent twice, each way (e.g. 0.1%)")
	fs.Var(labBurstLossValue{&f.burst}, "burst-loss", "Gilbert burst loss P,R: P the chance to enter a loss burst, R to leave it (e.g. 1%,30%)")
	fs.Var(flagvalue.Size(&f.queue), "queue", "bytes that may wait for the rate cap, each way (e.g. 1M; default 50 ms at the rate)")
	fs.IntVar(&f.mtu, "mtu", f.mtu, "MTU of every link")
	fs.Uint64Var(&f.randStart, "rand-start", 0, "where the emulator's random-number generator starts (0: from the clock; status shows it)")
	fs.IntVar(&f.senders, "senders", 0, "build senders a1…aN, each with its own access link, sharing the path to b (wireperf group)")
	fs.Var(flagvalue.Rate(&f.accessRate), "access-rate", "with --senders: cap each access link, both ways (e.g. 300m)")
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
			if err := labNeedRoot("exec"); err != nil {
				return err
			}
			err := lab.Exec(args[0], args[1], args[2:])
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return err
			}
			code := ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
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
			return writeLabStatus(e, st)
		},
	}
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "print the status as JSON")
	return cmd
}

// writeLabStatus prints a lab's state for people.
func writeLabStatus(e env, st *lab.State) error {
	w := e.stdout
	state := "NOT running (take the lab down and up again)"
	if st.Running {
		state = fmt.Sprintf("running (pid %d)", st.RouterPID)
	}
	fmt.Fprintf(w, "lab %q: router %s; counters from %s\n", st.Name, state, st.Updated.Format(time.RFC3339))
	if st.Senders > 0 {
		fmt.Fprintf(w, "  a1…a%d ─ s ─ r ─ b (%s), MTU %d, rand-start %d\n", st.Senders, st.Addrs["b"], st.MTU, st.RandStart)
	} else {
		fmt.Fprintf(w, "  a (%s) ─ r ─ b (%s), MTU %d, rand-start %d\n", st.Addrs["a"], st.Addrs["b"], st.MTU, st.RandStart)
	}
	fmt.Fprintf(w, "  a→b: %s\n  b→a: %s\n\n", st.AtoB, st.BtoA)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tin\tout\tlost\tloss\tqueue\tlimit\tduplicated\treordered\theld\tqueued\twrite errors\toversize\tTUN queue drops\t")
	dir := func(name string, d lab.DirStats) {
		tun := "-"
		if d.TunIn != nil {
			tun = strconv.FormatUint(d.TunIn.TxDropped, 10)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name,
			d.Counters.In, d.Out, d.Lost(), d.DroppedLoss, d.DroppedQueue, d.DroppedLimit,
			d.Duplicated, d.Reordered, d.Held, d.QueuedPackets, d.WriteErrors, d.Oversize, tun)
	}
	dir("a→b", st.Router.AtoB)
	dir("b→a", st.Router.BtoA)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n  lost = loss + queue + limit + write errors + oversize + TUN queue drops")
	for _, d := range []struct {
		name string
		s    lab.DirStats
	}{{"a→b", st.Router.AtoB}, {"b→a", st.Router.BtoA}} {
		if d.s.ReleasedLate > 0 || d.s.OutputLostUs > 0 {
			fmt.Fprintf(w, "  %s: the router fell behind: %d packets left more than 1 ms late (the worst %.1f ms), "+
				"and its output stood idle %.1f ms while packets were due: the path delivered later, and less, than its settings say\n",
				d.name, d.s.ReleasedLate, float64(d.s.MaxLateUs)/1e3, float64(d.s.OutputLostUs)/1e3)
		}
	}
	writeAccessStats(w, st)
	// The router's TUN devices: imp-a carries a→b packets into the router
	// (and b→a packets out), imp-b the other way.
	for _, d := range []struct {
		dev string
		s   *lab.LinkStats
	}{{"imp-a", st.Router.AtoB.TunIn}, {"imp-b", st.Router.BtoA.TunIn}} {
		if d.s == nil {
			fmt.Fprintf(w, "  %s: counters not read (needs root)\n", d.dev)
			continue
		}
		fmt.Fprintf(w, "  %s: rx %d packets (dropped %d), tx %d packets (dropped %d: the router was behind)\n",
			d.dev, d.s.RxPackets, d.s.RxDropped, d.s.TxPackets, d.s.TxDropped)
	}
	return nil
}

func newLabDownCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "down NAME",
		Short: "Stop the lab's router and remove its namespaces and files",
		Args:  labNameArg,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := labNeedRoot("down"); err != nil {
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
			names, err := lab.List()
			if err != nil {
				return err
			}
			for _, n := range names {
				state := "router not running"
				if st, err := lab.Status(n); err == nil && st.Running {
					state = fmt.Sprintf("a %s ─ r ─ b %s; a→b %s", st.Addrs["a"], st.Addrs["b"], st.AtoB)
					if st.Senders > 0 {
						state = fmt.Sprintf("a1…a%d ─ s ─ r ─ b %s; s→b %s", st.Senders, st.Addrs["b"], st.AtoB)
					}
				}
				if _, err := fmt.Fprintf(e.stdout, "%s\t%s\n", n, state); err != nil {
					return err
				}
			}
			return nil
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
			if err := labNeedRoot("router"); err != nil {
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

// Flag values for the lab's settings, parsed as the emulator parses them
// (impair.ParseConfig), so that a bad value fails with the flag's name.

type labPercentValue struct{ p *float64 }

func (v labPercentValue) get() any { return *v.p }
func (v labPercentValue) String() string {
	if v.p == nil || *v.p == 0 {
		return "0"
	}
	return strconv.FormatFloat(*v.p*100, 'g', -1, 64) + "%"
}
func (v labPercentValue) Set(s string) error {
	p, err := impair.ParsePercent(s)
	if err != nil {
		return err
	}
	*v.p = p
	return nil
}
func (labPercentValue) Type() string { return "percent" }

type labBurstLossValue struct{ p **impair.GilbertElliott }

func (v labBurstLossValue) get() any { return *v.p }
func (v labBurstLossValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return fmt.Sprintf("%g,%g", (*v.p).P, (*v.p).R)
}
func (v labBurstLossValue) Set(s string) error {
	ps, rs, ok := strings.Cut(s, ",")
	if !ok {
		ps, rs, ok = strings.Cut(s, "/")
	}
	if !ok {
		return fmt.Errorf("want P,R (e.g. 1%%,30%%), got %q", s)
	}
	p, err := impair.ParsePercent(ps)
	if err != nil {
		return err
	}
	r, err := impair.ParsePercent(rs)
	if err != nil {
		return err
	}
	if r == 0 && p > 0 {
		return fmt.Errorf("R 0 would make the first loss burst last for ever")
	}
	*v.p = impair.Gilbert(p, r)
	return nil
}
func (labBurstLossValue) Type() string { return "P,R" }
