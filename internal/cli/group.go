package cli

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/group"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// groupFlags are the group command's flags.
type groupFlags struct {
	pairs          []string
	file           string
	opts           group.Options
	port           int
	keyFile        string
	startIn        time.Duration
	clockProbes    int
	maxUncertainty time.Duration
	connectTimeout time.Duration
	json           bool
	format         units.Format
	logfile        string
	log            logOptions
}

func newGroupCmd(e env) *cobra.Command {
	f := &groupFlags{
		port: spec.DefaultPort, startIn: group.DefaultStartIn, clockProbes: group.DefaultClockProbes,
		connectTimeout: spec.DefaultConnectTO, format: 'a', log: logOptions{level: "warn", format: "text"},
	}
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
			cfg, err := f.config(cmd)
			if err != nil {
				return err
			}
			return runGroup(cmd.Context(), e, f, cfg)
		},
	}
	fs := cmd.Flags()
	o := &f.opts
	fs.StringArrayVar(&f.pairs, "pair", nil, "SENDER,RECEIVER, each HOST, HOST:PORT or [IPv6]:PORT (repeat for each pair)")
	fs.StringVarP(&f.file, "file", "f", "", "read the pairs and their flags from this YAML file (docs/multi-host.md)")
	fs.IntVarP(&f.port, "port", "p", f.port, "port of agents and receivers that name none")
	fs.StringVar(&f.keyFile, "agent-key-file", "", "prove to the agents that you hold their key: a file whose first line is \"name key\" (mode 600)")
	fs.Var(flagvalue.Duration(&f.startIn), "start-in", "start this long after every pair is set up")
	fs.IntVar(&f.clockProbes, "clock-probes", f.clockProbes, "clock exchanges with each agent; the least-delay one counts")
	fs.Var(flagvalue.Duration(&f.maxUncertainty), "max-uncertainty", "refuse to start when an agent's clock offset is known less well than this, e.g. 1ms (0: no limit)")
	fs.Var(flagvalue.Duration(&f.connectTimeout), "connect-timeout", "bound on connecting to an agent and on each set-up step")
	fs.VarP(flagvalue.Duration(&o.Duration), "time", "t", "test length of every pair")
	fs.VarP(flagvalue.Duration(&o.Interval), "interval", "i", "interval of the reports and of the sum")
	fs.VarP(flagvalue.Duration(&o.Omit), "omit", "O", "leave the first seconds out of the totals")
	fs.IntVarP(&o.Parallel, "parallel", "P", 0, "parallel streams of each pair")
	fs.StringVarP(&o.Bitrate, "bitrate", "b", "", "rate per stream: UDP RATE or RATE/BURST; TCP paces with the kernel")
	fs.BoolVarP(&o.UDP, "udp", "u", false, "UDP instead of TCP")
	fs.BoolVarP(&o.Reverse, "reverse", "R", false, "receivers send, senders receive")
	fs.BoolVar(&o.Bidir, "bidir", false, "both ends of each pair send at once")
	fs.VarP(flagvalue.Size(&o.Window), "window", "w", "socket buffer on both ends of each pair")
	fs.VarP(flagvalue.Size(&o.Length), "length", "l", "bytes per write and per read")
	fs.BoolVarP(&f.json, "json", "J", false, "one JSON document: pairs, sum, start_skew")
	fs.Var(flagvalue.Format(&f.format), "format", "rate units of the text report: k, m, g, t (bits) or K, M, G, T (bytes); a for adaptive")
	fs.StringVar(&f.logfile, "logfile", "", "write the report to this file instead of stdout (appends)")
	fs.StringVar(&f.log.level, "log-level", f.log.level, "log level: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "log format: text or json")
	return cmd
}

// config checks everything a group needs before any traffic: the pairs,
// the key file and that every host resolves.
func (f *groupFlags) config(cmd *cobra.Command) (group.Config, error) {
	cfg := group.Config{StartIn: f.startIn, ClockProbes: f.clockProbes, MaxUncertainty: f.maxUncertainty, Timeout: f.connectTimeout}
	switch {
	case f.file != "" && len(f.pairs) > 0:
		return cfg, usagef("--pair and -f: choose one")
	case f.startIn <= 0 || f.startIn > agent.MaxStartAhead-time.Second:
		return cfg, usagef("--start-in %v: want more than 0 and at most %v", f.startIn, agent.MaxStartAhead-time.Second)
	case f.clockProbes < 1 || f.clockProbes > agent.MaxClockProbes:
		return cfg, usagef("--clock-probes %d: want 1 to %d", f.clockProbes, agent.MaxClockProbes)
	case f.connectTimeout <= 0:
		return cfg, usagef("--connect-timeout: must be positive")
	case f.port < 1 || f.port > 65535:
		return cfg, usagef("-p %d: want 1 to 65535", f.port)
	}
	keyFile := f.keyFile
	if f.file != "" {
		file, err := group.ReadFile(f.file)
		if err != nil {
			return cfg, usageError{err}
		}
		opts, err := f.flagsOverFile(cmd)
		if err != nil {
			return cfg, err
		}
		if cfg.Pairs, err = file.PairsOf(opts, f.port); err != nil {
			return cfg, usagef("%s: %v", f.file, err)
		}
		if keyFile == "" {
			keyFile = file.AgentKeyFile
		}
		if file.StartIn != "" && !cmd.Flags().Changed("start-in") {
			if cfg.StartIn, err = units.ParseDuration(file.StartIn); err != nil || cfg.StartIn <= 0 || cfg.StartIn > agent.MaxStartAhead-time.Second {
				return cfg, usagef("%s: start-in %q: want more than 0 and at most %v", f.file, file.StartIn, agent.MaxStartAhead-time.Second)
			}
		}
	} else {
		s, err := f.opts.Spec()
		if err != nil {
			return cfg, usageError{err}
		}
		for _, arg := range f.pairs {
			sender, receiver, ok := strings.Cut(arg, ",")
			if !ok || strings.Contains(receiver, ",") {
				return cfg, usagef("--pair %q: want SENDER,RECEIVER", arg)
			}
			p, err := group.NewPair(sender, receiver, f.port)
			if err != nil {
				return cfg, usagef("--pair %q: %v", arg, err)
			}
			p.Spec = s
			cfg.Pairs = append(cfg.Pairs, p)
		}
	}
	if err := group.CheckPairs(cfg.Pairs); err != nil {
		return cfg, usageError{err}
	}
	if keyFile == "" {
		return cfg, usagef("--agent-key-file: a group needs the agents' key")
	}
	cred, err := auth.LoadCredential(keyFile)
	if err != nil {
		return cfg, usageError{err}
	}
	cfg.Cred = cred
	if err := group.Resolve(context.Background(), cfg.Pairs, nil); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// flagsOverFile is the base for a file's pairs: the command line's test
// flags, where given, apply to every pair unless the file says otherwise.
func (f *groupFlags) flagsOverFile(cmd *cobra.Command) (group.Options, error) {
	for _, name := range []string{"time", "interval", "omit", "parallel", "bitrate", "udp", "reverse", "bidir", "window", "length"} {
		if cmd.Flags().Changed(name) {
			return f.opts, usagef("--%s with -f: say it in the file", name)
		}
	}
	return group.Options{}, nil
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
		err = group.WriteText(rio.out, rep, f.format)
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return errors.New(rep.Error)
	}
	return nil
}
