package measure

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
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

// Register adds the run's flags to fs.
func (f *Ping) Register(fs *pflag.FlagSet) {
	fs.IntVar(&f.Cfg.Count, "count", f.Cfg.Count, fmt.Sprintf("echo requests to send (1 to %d)", pingplan.MaxCount))
	fs.Var(flagvalue.Duration(&f.Cfg.Interval), "interval", fmt.Sprintf("between two requests (at least %v)", pingplan.MinInterval))
	fs.IntVar(&f.Cfg.Size, "size", f.Cfg.Size, "bytes of data in each request, after the ICMP header")
	fs.Var(flagvalue.Duration(&f.Cfg.Timeout), "timeout", "how long the last request waits for its reply")
	fs.BoolVar(&f.Cfg.Raw, "raw", false, "a raw ICMP socket (root or CAP_NET_RAW) instead of a ping socket (net.ipv4.ping_group_range)")
	fs.BoolVarP(&f.IPv4, "version4", "4", false, "only IPv4")
	fs.BoolVarP(&f.IPv6, "version6", "6", false, "only IPv6")
	fs.BoolVarP(&f.JSON, "json", "J", false, "one JSON document: counts, RTT percentiles, TTL")
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
