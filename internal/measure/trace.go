package measure

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
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

// Register adds every flag testflags.Trace declares to fs: the command
// line binds none of its own.
func (f *Trace) Register(fs *pflag.FlagSet) {
	testflags.Register(fs, testflags.Trace, f.binds())
}

// binds is what each of the test's flags sets.
func (f *Trace) binds() testflags.Binds {
	return testflags.Binds{
		"max-hops":      &f.Cfg.MaxHops,
		"probes":        &f.Cfg.Probes,
		"proto":         &f.Proto,
		"probe-timeout": flagvalue.Duration(&f.Cfg.ProbeTimeout),
		"max-time":      flagvalue.Duration(&f.Cfg.Total),
		"raw":           &f.Cfg.Raw,
		"json":          &f.JSON,
	}
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
