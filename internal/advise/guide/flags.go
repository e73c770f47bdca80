package guide

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/spec"
)

// Flags are `wireperf advise`'s flags that say what to measure and how
// to reach the server. Register adds them to a command; Config checks
// them and builds the Config.
type Flags struct {
	Port           int
	Bind           string
	Duration       time.Duration
	Streams        int
	Reverse        bool
	Congestion     string
	Bottleneck     string
	Probes         int
	ConnectTimeout time.Duration
	Security       authflags.Client // --auth-key-file, --tls-ca, --tls-pin
}

// NewFlags are the flags' defaults.
func NewFlags() *Flags {
	return &Flags{Port: spec.DefaultPort, Streams: DefaultStreams, Probes: DefaultProbes, ConnectTimeout: spec.DefaultConnectTO}
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.IntVarP(&f.Port, "port", "p", f.Port, "server port")
	fs.StringVarP(&f.Bind, "bind", "B", "", "local address for the connections")
	fs.VarP(flagvalue.Duration(&f.Duration), "time", "t", "length of each test (default: chosen from the RTT and slow start, 5 s to 30 s)")
	fs.IntVarP(&f.Streams, "parallel", "P", f.Streams, "streams of the first multi-stream test (more while they are window-limited)")
	fs.BoolVarP(&f.Reverse, "reverse", "R", false, "measure server → client instead")
	fs.StringVarP(&f.Congestion, "congestion", "C", "", "congestion control on both ends (default: each host's)")
	fs.StringVar(&f.Bottleneck, "bottleneck", "", "the path's bottleneck rate, e.g. 1g or 622m (default: the best multi-stream goodput)")
	fs.IntVar(&f.Probes, "probes", f.Probes, "connections that time the idle RTT")
	fs.Var(flagvalue.Duration(&f.ConnectTimeout), "connect-timeout", "give up connecting after this long")
	f.Security.Register(fs)
}

// Config checks the flags and builds the guided run against host; every
// error is one the command line fixes.
func (f *Flags) Config(host string) (Config, error) {
	cfg := Config{
		Host: host, Port: f.Port, Bind: f.Bind, Duration: f.Duration, Streams: f.Streams,
		Reverse: f.Reverse, Congestion: f.Congestion, Probes: f.Probes, ConnectTimeout: f.ConnectTimeout,
	}
	if f.Port < 1 || f.Port > 65535 {
		return cfg, fmt.Errorf("-p %d: want 1 to 65535", f.Port)
	}
	if f.Duration != 0 && (f.Duration < 500*time.Millisecond || f.Duration > time.Hour) {
		return cfg, fmt.Errorf("-t %v: want 0.5 s to 1 hour", f.Duration)
	}
	if f.Streams < 2 || f.Streams > spec.MaxStreams {
		return cfg, fmt.Errorf("-P %d: want 2 to %d streams", f.Streams, spec.MaxStreams)
	}
	if f.Probes < 1 || f.Probes > 100 {
		return cfg, fmt.Errorf("--probes %d: want 1 to 100", f.Probes)
	}
	if f.ConnectTimeout <= 0 {
		return cfg, errors.New("--connect-timeout: must be positive")
	}
	var err error
	if cfg.Auth, cfg.TLS, err = f.Security.Load(host); err != nil {
		return cfg, err
	}
	if f.Bottleneck != "" {
		if cfg.Bottleneck, err = measure.ParseBottleneck(f.Bottleneck); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}
