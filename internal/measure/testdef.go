// Package measure is what a test is: the client, rr, udpmon and trace
// commands' flags with their defaults and checks, and the one value an
// argv turns into (the kind, the spec, how long it runs, which way data
// flows and what it holds on the server). cli registers its flags from here, and
// every runner of tests (sweep, group, mesh, the daemon) reads a test
// here, so one line means the same test wherever it is run.
package measure

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/testline"
)

// Kind is a test's command.
type Kind string

// The kinds of test.
const (
	KindClient Kind = "client"
	KindRR     Kind = "rr"
	KindUDPMon Kind = "udpmon"
	KindTrace  Kind = "trace"
)

// Kinds are every kind of test, in the order help lists them.
var Kinds = []Kind{KindClient, KindRR, KindUDPMon, KindTrace, KindPing, KindTCPConnect}

// Test is one parsed, checked test: exactly one of Client, RR, UDPMon,
// Trace, Ping and TCPConnect is set, as Kind says.
type Test struct {
	Kind   Kind
	Client *Client
	RR     *RR
	UDPMon *UDPMon
	Trace  *Trace
	// Probes of hosts that run nothing of wireperf's (ping.go,
	// tcpconnect.go).
	Ping       *Ping
	TCPConnect *TCPConnect
}

// New is a test of kind with every default, its flags registered on fs.
func New(kind Kind, fs *pflag.FlagSet) (Test, error) {
	t := Test{Kind: kind}
	switch kind {
	case KindClient:
		t.Client = NewClient()
		t.Client.Register(fs)
	case KindRR:
		t.RR = NewRR()
		t.RR.Register(fs)
	case KindUDPMon:
		t.UDPMon = NewUDPMon()
		t.UDPMon.Register(fs)
	case KindTrace:
		t.Trace = NewTrace()
		t.Trace.Register(fs)
	case KindPing:
		t.Ping = NewPing()
		t.Ping.Register(fs)
	case KindTCPConnect:
		t.TCPConnect = NewTCPConnect()
		t.TCPConnect.Register(fs)
	default:
		return Test{}, fmt.Errorf("%q: a test starts with client, rr, udpmon, trace, ping or tcp-connect", kind)
	}
	return t, nil
}

// Finish checks the flags fs parsed into t.
func (t Test) Finish(fs *pflag.FlagSet) error {
	switch t.Kind {
	case KindClient:
		return t.Client.Finish(fs)
	case KindRR:
		return t.RR.Finish(fs)
	case KindUDPMon:
		return t.UDPMon.Finish()
	case KindTrace:
		return t.Trace.Finish()
	case KindPing:
		return t.Ping.Finish()
	case KindTCPConnect:
		return t.TCPConnect.Finish()
	}
	return fmt.Errorf("%q: not a test", t.Kind)
}

// Parse reads a test command's flags (args, without the command word),
// as the command line reads them, and checks them. It takes flags only:
// the destination is not part of a test's description. The flag set is
// returned for a caller that asks which flags were given.
func Parse(kind Kind, args []string) (Test, *pflag.FlagSet, error) {
	return ParseThen(kind, args, nil)
}

// ParseThen is Parse with then run on the parsed flags before they are
// checked: a caller that sets flags by their declared names (fs.Set, as
// the command line sets them) on a line it read, such as a group's
// options or a campaign point's axis values, or that checks which were
// given. then may be nil.
func ParseThen(kind Kind, args []string, then func(Test, *pflag.FlagSet) error) (Test, *pflag.FlagSet, error) {
	fs := NewFlagSet(string(kind))
	t, err := New(kind, fs)
	if err != nil {
		return Test{}, nil, err
	}
	if err := fs.Parse(args); err != nil {
		return Test{}, nil, err
	}
	if fs.NArg() > 0 {
		return Test{}, nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if then != nil {
		if err := then(t, fs); err != nil {
			return Test{}, nil, err
		}
	}
	if err := t.Finish(fs); err != nil {
		return Test{}, nil, err
	}
	return t, fs, nil
}

// NewFlagSet is an empty flag set that reports its errors instead of
// printing them.
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// ParseLine reads a scheduled test's line (from a mesh file, the API or
// a shared archive): package testline first takes only a measurement
// command and the flags that shape a measurement, then the line is read
// as the command reads its flags.
func ParseLine(words []string) (Test, error) {
	l, err := testline.Parse(words)
	if err != nil {
		return Test{}, err
	}
	t, _, err := Parse(Kind(l.Command), l.Words()[1:])
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			err = errors.New("help is not a test")
		}
		return Test{}, err
	}
	if t.TCPConnect != nil && t.TCPConnect.Port == 0 {
		// The destination's port is its server's, not the one probed.
		return Test{}, errors.New("a tcp-connect test names the port it probes with --tcp-port")
	}
	return t, nil
}

// ParseLineText splits a line's text (testline.Split) and reads it.
func ParseLineText(s string) (Test, []string, error) {
	words, err := testline.Split(s)
	if err != nil {
		return Test{}, nil, err
	}
	t, err := ParseLine(words)
	return t, words, err
}

// Direction is which way a test's data flows.
type Direction string

// The directions, as the mesh's grid names them.
const (
	Forward Direction = "forward" // the client sends
	Reverse Direction = "reverse" // the server sends (-R)
	Bidir   Direction = "bidir"
)

// Direction is which way the test's data flows. A request-response test
// goes both ways by nature; its direction is Forward, as its load's is
// not the test's.
func (t Test) Direction() Direction {
	switch {
	case t.Client != nil && t.Client.Spec.Bidir:
		return Bidir
	case t.Client != nil && t.Client.Spec.Reverse, t.UDPMon != nil && t.UDPMon.Cfg.Reverse:
		return Reverse
	}
	return Forward
}

// Resources are what a test holds on the server while it runs, as the
// server's limits count them (--max-tests-per-client, --max-streams,
// --max-test-memory).
type Resources struct {
	DataConns   int   // data connections (or UDP streams)
	BufferBytes int64 // data buffers
}

// Resources is what the test holds on the server; a udpmon sweep holds
// one point's at a time, its largest.
func (t Test) Resources() Resources {
	switch {
	case t.Client != nil:
		return Resources{DataConns: t.Client.Spec.DataConns(), BufferBytes: t.Client.Spec.BufferBytes()}
	case t.RR != nil:
		return Resources{DataConns: t.RR.Spec.DataConns(), BufferBytes: t.RR.Spec.BufferBytes()}
	case t.UDPMon != nil:
		var r Resources
		for _, size := range t.UDPMon.Cfg.Sizes {
			s := t.UDPMon.Cfg.Spec(size, 0)
			r.DataConns = max(r.DataConns, s.DataConns())
			r.BufferBytes = max(r.BufferBytes, s.BufferBytes())
		}
		return r
	}
	return Resources{}
}

// String is the test's kind and direction, for messages.
func (t Test) String() string {
	return strings.TrimSpace(string(t.Kind) + " " + string(t.Direction()))
}

// Binds is what a command line's own flags set, by name, given to a
// test's RegisterCommand (testflags.Binds).
type Binds = testflags.Binds
