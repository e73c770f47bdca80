package group

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// Flags are `wireperf group`'s flags that say what the group test is:
// the pairs (or the file that lists them), the agents' key, the start,
// and the test flags every pair shares, under the names a group file
// uses. Register adds them to a command; Config checks them and builds
// the Config.
type Flags struct {
	Pairs          []string // --pair SENDER,RECEIVER
	File           string   // -f
	Options        Options
	Port           int
	KeyFile        string // --agent-key-file
	StartIn        time.Duration
	ClockProbes    int
	MaxUncertainty time.Duration
	ConnectTimeout time.Duration
	// Format is the text report's rate unit (--format).
	Format units.Format
}

// NewFlags are the flags' defaults.
func NewFlags() *Flags {
	return &Flags{Port: spec.DefaultPort, StartIn: DefaultStartIn, ClockProbes: DefaultClockProbes, ConnectTimeout: spec.DefaultConnectTO, Format: 'a'}
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	o := &f.Options
	fs.Var(flagvalue.Format(&f.Format), "format", "rate units of the text report: k, m, g, t (bits) or K, M, G, T (bytes); a for adaptive")
	fs.StringArrayVar(&f.Pairs, "pair", nil, "SENDER,RECEIVER, each HOST, HOST:PORT or [IPv6]:PORT (repeat for each pair)")
	fs.StringVarP(&f.File, "file", "f", "", "read the pairs and their flags from this YAML file (docs/multi-host.md)")
	fs.IntVarP(&f.Port, "port", "p", f.Port, "port of agents and receivers that name none")
	fs.StringVar(&f.KeyFile, "agent-key-file", "", "prove to the agents that you hold their key: a file whose first line is \"name key\" (mode 600)")
	fs.Var(flagvalue.Duration(&f.StartIn), "start-in", "start this long after every pair is set up")
	fs.IntVar(&f.ClockProbes, "clock-probes", f.ClockProbes, "clock exchanges with each agent; the least-delay one counts")
	fs.Var(flagvalue.Duration(&f.MaxUncertainty), "max-uncertainty", "refuse to start when an agent's clock offset is known less well than this, e.g. 1ms (0: no limit)")
	fs.Var(flagvalue.Duration(&f.ConnectTimeout), "connect-timeout", "bound on connecting to an agent and on each set-up step")
	// The test's own flags are the client's that testflags declares a
	// group's (a group file says them for every pair, or pair by pair):
	// their names and shorthands are the client's, their help a pair's.
	for _, d := range testflags.Group() {
		o.register(fs, d)
	}
}

// register adds the test flag d declares to fs, bound to its option.
func (o *Options) register(fs *pflag.FlagSet, d testflags.Flag) {
	target, usage := o.option(d.Name)
	switch p := target.(type) {
	case *time.Duration:
		fs.VarP(flagvalue.Duration(p), d.Name, d.Short, usage)
	case *int64:
		fs.VarP(flagvalue.Size(p), d.Name, d.Short, usage)
	case *int:
		fs.IntVarP(p, d.Name, d.Short, *p, usage)
	case *string:
		fs.StringVarP(p, d.Name, d.Short, *p, usage)
	case *bool:
		fs.BoolVarP(p, d.Name, d.Short, *p, usage)
	default:
		panic("group: no option for the declared group flag --" + d.Name) // TestGroupFlagsAreDeclared
	}
}

// option is the field a declared group flag sets, and its help.
func (o *Options) option(name string) (any, string) {
	switch name {
	case "time":
		return &o.Duration, "test length of every pair"
	case "interval":
		return &o.Interval, "interval of the reports and of the sum"
	case "omit":
		return &o.Omit, "leave the first seconds out of the totals"
	case "parallel":
		return &o.Parallel, "parallel streams of each pair"
	case "bitrate":
		return &o.Bitrate, "rate per stream in bit/s, k m g t powers of 1000 in either case as iperf3: UDP RATE or RATE/BURST; TCP paces with the kernel"
	case "udp":
		return &o.UDP, "UDP instead of TCP"
	case "reverse":
		return &o.Reverse, "receivers send, senders receive"
	case "bidir":
		return &o.Bidir, "both ends of each pair send at once"
	case "window":
		return &o.Window, "socket buffer on both ends of each pair"
	case "length":
		return &o.Length, "bytes per write and per read"
	}
	return nil, ""
}

// Config checks everything a group needs before any traffic: the pairs,
// the key file and that every host resolves. fs says which flags were
// given. Every error is one the command line fixes.
func (f *Flags) Config(ctx context.Context, fs *pflag.FlagSet) (Config, error) {
	cfg := Config{StartIn: f.StartIn, ClockProbes: f.ClockProbes, MaxUncertainty: f.MaxUncertainty, Timeout: f.ConnectTimeout}
	maxStartIn := agent.MaxStartAhead - time.Second
	switch {
	case f.File != "" && len(f.Pairs) > 0:
		return cfg, errors.New("--pair and -f: choose one")
	case f.StartIn <= 0 || f.StartIn > maxStartIn:
		return cfg, fmt.Errorf("--start-in %v: want more than 0 and at most %v", f.StartIn, maxStartIn)
	case f.ClockProbes < 1 || f.ClockProbes > agent.MaxClockProbes:
		return cfg, fmt.Errorf("--clock-probes %d: want 1 to %d", f.ClockProbes, agent.MaxClockProbes)
	case f.ConnectTimeout <= 0:
		return cfg, errors.New("--connect-timeout: must be positive")
	case f.Port < 1 || f.Port > 65535:
		return cfg, fmt.Errorf("-p %d: want 1 to 65535", f.Port)
	}
	keyFile := f.KeyFile
	if f.File != "" {
		file, err := ReadFile(f.File)
		if err != nil {
			return cfg, err
		}
		// The file says the test flags, for every pair or pair by pair.
		for _, d := range testflags.Group() {
			if fs.Changed(d.Name) {
				return cfg, fmt.Errorf("--%s with -f: say it in the file", d.Name)
			}
		}
		if cfg.Pairs, err = file.PairsOf(Options{}, f.Port); err != nil {
			return cfg, fmt.Errorf("%s: %v", f.File, err)
		}
		if keyFile == "" {
			keyFile = file.AgentKeyFile
		}
		if file.StartIn != "" && !fs.Changed("start-in") {
			if cfg.StartIn, err = units.ParseDuration(file.StartIn); err != nil || cfg.StartIn <= 0 || cfg.StartIn > maxStartIn {
				return cfg, fmt.Errorf("%s: start-in %q: want more than 0 and at most %v", f.File, file.StartIn, maxStartIn)
			}
		}
	} else {
		s, err := f.Options.Spec()
		if err != nil {
			return cfg, err
		}
		for _, arg := range f.Pairs {
			sender, receiver, ok := strings.Cut(arg, ",")
			if !ok || strings.Contains(receiver, ",") {
				return cfg, fmt.Errorf("--pair %q: want SENDER,RECEIVER", arg)
			}
			p, err := NewPair(sender, receiver, f.Port)
			if err != nil {
				return cfg, fmt.Errorf("--pair %q: %v", arg, err)
			}
			p.Spec = s
			cfg.Pairs = append(cfg.Pairs, p)
		}
	}
	if err := CheckPairs(cfg.Pairs); err != nil {
		return cfg, err
	}
	if keyFile == "" {
		return cfg, errors.New("--agent-key-file: a group needs the agents' key")
	}
	cred, err := auth.LoadCredential(keyFile)
	if err != nil {
		return cfg, err
	}
	cfg.Cred = cred
	if err := Resolve(ctx, cfg.Pairs, nil); err != nil {
		return cfg, err
	}
	return cfg, nil
}
