package measure

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/trace/traceplan"
)

// Trace is a path trace (wireperf trace): its flags. Cfg is the trace;
// Finish reads Proto into it.
type Trace struct {
	Cfg   traceplan.Config
	Proto string
	JSON  bool
}

// NewTrace is a trace with every default: UDP probes, 30 hops, 3 a hop.
func NewTrace() *Trace {
	return &Trace{Cfg: traceplan.DefaultConfig(), Proto: string(traceplan.UDP)}
}

// Register adds the trace's flags to fs.
func (f *Trace) Register(fs *pflag.FlagSet) {
	fs.IntVar(&f.Cfg.MaxHops, "max-hops", f.Cfg.MaxHops, fmt.Sprintf("the largest TTL probed (1 to %d)", traceplan.MaxHopsLimit))
	fs.IntVar(&f.Cfg.Probes, "probes", f.Cfg.Probes, fmt.Sprintf("probes per hop (1 to %d)", traceplan.MaxProbesLimit))
	fs.StringVar(&f.Proto, "proto", f.Proto, "what a probe is: udp (a datagram to an unlikely port) or icmp (an echo request)")
	fs.Var(flagvalue.Duration(&f.Cfg.ProbeTimeout), "probe-timeout", "how long a hop's probes wait for their answers")
	fs.Var(flagvalue.Duration(&f.Cfg.Total), "max-time", "stop the trace after this long (0: max hops × probe timeout)")
	fs.BoolVar(&f.Cfg.Raw, "raw", false, "read the answers through a raw ICMP socket (root or CAP_NET_RAW); without it, from the probing socket's error queue, which needs no privilege")
	fs.BoolVarP(&f.JSON, "json", "J", false, "one JSON document: every hop with its address and each probe's RTT")
}

// Finish checks the parsed flags.
func (f *Trace) Finish() error {
	p, err := traceplan.ParseProto(f.Proto)
	if err != nil {
		return err
	}
	f.Cfg.Proto = p
	return f.Cfg.Check()
}

// traceDuration is the trace's bound: every hop waiting its timeout, or
// --max-time when it is shorter.
func traceDuration(f *Trace) time.Duration { return f.Cfg.Bound() }
