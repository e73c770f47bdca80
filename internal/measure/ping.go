package measure

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/ping/pingplan"
)

// KindPing is ICMP echo to a host that runs nothing of wireperf's.
const KindPing Kind = "ping"

// Ping is an ICMP echo run (wireperf ping): its flags. Cfg is the run;
// Finish reads the family flags into it.
type Ping struct {
	Cfg        pingplan.Config
	IPv4, IPv6 bool
	JSON       bool
}

// NewPing is a ping run with every default: 10 requests a second apart.
func NewPing() *Ping { return &Ping{Cfg: pingplan.DefaultConfig()} }

// Register adds every flag testflags.Ping declares to fs: the command
// line binds none of its own.
func (f *Ping) Register(fs *pflag.FlagSet) {
	testflags.Register(fs, testflags.Ping, f.binds())
}

// binds is what each of the test's flags sets.
func (f *Ping) binds() testflags.Binds {
	return testflags.Binds{
		"count":    &f.Cfg.Count,
		"interval": flagvalue.Duration(&f.Cfg.Interval),
		"size":     &f.Cfg.Size,
		"timeout":  flagvalue.Duration(&f.Cfg.Timeout),
		"raw":      &f.Cfg.Raw,
		"version4": &f.IPv4,
		"version6": &f.IPv6,
		"json":     &f.JSON,
	}
}

// Finish checks the parsed flags.
func (f *Ping) Finish() error {
	switch {
	case f.IPv4 && f.IPv6:
		return errors.New("-4 and -6 together: choose one")
	case f.IPv4:
		f.Cfg.Family = "ip4"
	case f.IPv6:
		f.Cfg.Family = "ip6"
	}
	return f.Cfg.Check()
}
