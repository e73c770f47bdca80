package serverflags

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/runner/mcastrun"
)

// registerMulticast adds iperf 2's receiver flags: with -B GROUP the
// server is a multicast receiver instead (docs/multicast.md).
func (f *Flags) registerMulticast(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.UDP, "udp", "u", false, "iperf 2's -u: the server serves UDP tests without it; with -B GROUP it is a multicast receiver either way")
	fs.StringVarP(&f.SSMHost, "ssm-host", "H", "", "with -B GROUP: join only this sender's datagrams (source-specific multicast, IGMPv3/MLDv2), as iperf 2's -H")
}

// finishMulticast checks the multicast receiver's flags.
func (f *Flags) finishMulticast() error {
	m := f.Multicast()
	if m == nil {
		if f.SSMHost != "" {
			return errors.New("-H: a source-specific join needs -B GROUP (a multicast group)")
		}
		return nil
	}
	if f.Agent.On {
		return errors.New("-B GROUP: a multicast receiver serves no agent")
	}
	return m.Check()
}

// Multicast is the multicast receiver the flags describe (-B GROUP), or
// nil when the server is wireperf's server.
func (f *Flags) Multicast() *mcastrun.Server {
	if !mcastrun.IsGroup(f.Config.Bind) {
		return nil
	}
	return &mcastrun.Server{Group: f.Config.Bind, Source: f.SSMHost, Port: f.Config.Port,
		Interval: f.Interval, Format: f.Format, JSON: f.JSON, Once: f.Config.Once}
}
