// Package group runs one test from several hosts at once: each pair is a
// sender agent (internal/agent) and a receiving wireperf server. Every
// agent sets its test up first, then all start at one instant of the
// controller's clock, each agent's measured offset added; the report
// joins the pairs on one time base.
package group

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// Endpoint is a host and a port.
type Endpoint struct {
	Host string
	Port int
}

func (e Endpoint) String() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// ParseEndpoint reads HOST, HOST:PORT, an IPv6 address, or [v6]:PORT;
// a missing port is defPort.
func ParseEndpoint(s string, defPort int) (Endpoint, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Endpoint{}, fmt.Errorf("empty host")
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil && (a.Is6() || !strings.Contains(s, ":")) {
		return Endpoint{Host: a.String(), Port: defPort}, nil
	}
	if !strings.Contains(s, ":") {
		return Endpoint{Host: s, Port: defPort}, nil
	}
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%q: want HOST, HOST:PORT or [IPv6]:PORT", s)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return Endpoint{}, fmt.Errorf("%q: want a port from 1 to 65535", s)
	}
	return Endpoint{Host: host, Port: port}, nil
}

// Options are the test flags of a pair: the group's, then each pair's own
// on top. Zero values mean the default.
type Options struct {
	Duration time.Duration
	Interval time.Duration
	Omit     time.Duration
	Parallel int
	Bitrate  string // -b: RATE, or RATE/BURST for UDP
	UDP      bool
	Reverse  bool
	Bidir    bool
	Window   int64
	Length   int64
}

// Spec is the test these options describe, read by the client's own
// model (package measure): each declared group flag (testflags.Group)
// that is set is set on the client's flags under its declared name, as
// the command line sets it, and checked as one client's are (-O runs
// before the -t that is measured).
func (o Options) Spec() (spec.Spec, error) {
	t, _, err := measure.ParseThen(measure.KindClient, nil, func(_ measure.Test, fs *pflag.FlagSet) error {
		for _, d := range testflags.Group() {
			target, _ := o.option(d.Name)
			if v, set := optionValue(target); set {
				if err := fs.Set(d.Name, v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return spec.Spec{}, err
	}
	return t.Client.Spec, nil
}

// optionValue is an option's value as its flag reads it, and whether it
// is set: a zero value (and a non-positive length of time or count)
// leaves the client's default.
func optionValue(target any) (string, bool) {
	switch p := target.(type) {
	case *time.Duration:
		return units.DurationString(*p), *p > 0
	case *int64:
		return strconv.FormatInt(*p, 10), *p != 0
	case *int:
		return strconv.Itoa(*p), *p > 0
	case *string:
		return *p, *p != ""
	case *bool:
		return "true", *p
	}
	return "", false
}

// Pair is one sender agent and its receiving server.
type Pair struct {
	Sender   Endpoint
	Receiver Endpoint
	Spec     spec.Spec
}

// Name is the pair as the user wrote it, for messages.
func (p Pair) Name() string { return p.Sender.String() + "→" + p.Receiver.String() }

// CheckPairs refuses what must be refused before any traffic: no pairs,
// and a sender named twice (one agent runs one test at a time).
func CheckPairs(pairs []Pair) error {
	if len(pairs) == 0 {
		return fmt.Errorf("no pairs: give --pair SENDER,RECEIVER or -f FILE")
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		k := p.Sender.String()
		if seen[k] {
			return fmt.Errorf("sender %s is named twice: an agent runs one test of a group", k)
		}
		seen[k] = true
	}
	return nil
}

// Resolve checks that every host resolves, with lookup (net's resolver
// when nil), before anything is sent.
func Resolve(ctx context.Context, pairs []Pair, lookup func(context.Context, string) ([]string, error)) error {
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	done := map[string]bool{}
	for _, p := range pairs {
		for _, h := range []string{p.Sender.Host, p.Receiver.Host} {
			if done[h] {
				continue
			}
			done[h] = true
			if _, err := netip.ParseAddr(h); err == nil {
				continue
			}
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := lookup(lctx, h)
			cancel()
			if err != nil {
				return fmt.Errorf("host %s does not resolve: %v", h, err)
			}
		}
	}
	return nil
}
