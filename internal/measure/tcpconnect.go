package measure

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/tcpconnect/connectplan"
)

// KindTCPConnect is the TCP handshake to a host:port that runs nothing
// of wireperf's.
const KindTCPConnect Kind = "tcp-connect"

// TCPConnect is a handshake-time run (wireperf tcp-connect): its flags.
type TCPConnect struct {
	Cfg connectplan.Config
	// Port, when not 0, is the port probed, the target then being a
	// host (as a mesh's test names it; the command line may say
	// HOST:PORT instead).
	Port       int
	IPv4, IPv6 bool
	JSON       bool
}

// NewTCPConnect is a run with every default: 10 connects a second apart.
func NewTCPConnect() *TCPConnect { return &TCPConnect{Cfg: connectplan.DefaultConfig()} }

// Register adds every flag testflags.TCPConnect declares to fs: the command
// line binds none of its own.
func (f *TCPConnect) Register(fs *pflag.FlagSet) {
	testflags.Register(fs, testflags.TCPConnect, f.binds())
}

// binds is what each of the test's flags sets.
func (f *TCPConnect) binds() testflags.Binds {
	return testflags.Binds{
		"count":    &f.Cfg.Count,
		"interval": flagvalue.Duration(&f.Cfg.Interval),
		"timeout":  flagvalue.Duration(&f.Cfg.Timeout),
		"tcp-port": &f.Port,
		"version4": &f.IPv4,
		"version6": &f.IPv6,
		"json":     &f.JSON,
	}
}

// Finish checks the parsed flags.
func (f *TCPConnect) Finish() error {
	if f.Port < 0 || f.Port > 65535 {
		return fmt.Errorf("--tcp-port %d: want 1 to 65535", f.Port)
	}
	switch {
	case f.IPv4 && f.IPv6:
		return errors.New("-4 and -6 together: choose one")
	case f.IPv4:
		f.Cfg.Family = "tcp4"
	case f.IPv6:
		f.Cfg.Family = "tcp6"
	}
	return f.Cfg.Check()
}

// Target is what the run connects to: target itself (HOST:PORT), or
// host and --tcp-port.
func (f *TCPConnect) Target(target string) (string, error) {
	if f.Port == 0 {
		return target, nil
	}
	if _, _, err := net.SplitHostPort(target); err == nil {
		return "", fmt.Errorf("%s and --tcp-port %d: give the port once", target, f.Port)
	}
	return net.JoinHostPort(strings.Trim(target, "[]"), strconv.Itoa(f.Port)), nil
}
