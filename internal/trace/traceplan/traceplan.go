// Package traceplan is a path trace as a user asks for it (the probe,
// the hops, the probes a hop, the timeouts) with its defaults and checks;
// internal/trace runs one. It opens no socket, so the model of a test
// (internal/measure) describes a trace through it.
package traceplan

import (
	"fmt"
	"strings"
	"time"
)

// Proto is what a probe is.
type Proto string

// The probes.
const (
	UDP  Proto = "udp"  // a UDP datagram to port BasePort
	ICMP Proto = "icmp" // an ICMP echo request
)

// ParseProto reads a probe's name.
func ParseProto(s string) (Proto, error) {
	switch Proto(s) {
	case UDP, ICMP:
		return Proto(s), nil
	}
	return "", fmt.Errorf("--proto %q: want udp or icmp", s)
}

// Defaults and limits.
const (
	DefaultMaxHops      = 30
	DefaultProbes       = 3
	DefaultProbeTimeout = time.Second
	MaxHopsLimit        = 64
	MaxProbesLimit      = 10
	// BasePort is a UDP probe's destination port (traceroute's first):
	// it is seldom open, so the destination answers with a port
	// unreachable.
	BasePort = 33434
)

// Config is one trace.
type Config struct {
	Proto        Proto
	MaxHops      int
	Probes       int           // per hop
	ProbeTimeout time.Duration // how long a hop's probes wait for their answers
	// Total bounds the whole trace (--max-time); zero, and anything
	// longer, is MaxHops × ProbeTimeout.
	Total time.Duration
	// Raw reads the answers through a raw ICMP socket (root or
	// CAP_NET_RAW) instead of the probing socket's error queue.
	Raw bool
}

// DefaultConfig is a UDP trace of 30 hops, 3 probes a hop, a second each.
func DefaultConfig() Config {
	return Config{Proto: UDP, MaxHops: DefaultMaxHops, Probes: DefaultProbes, ProbeTimeout: DefaultProbeTimeout}
}

// Check checks a config's values.
func (c Config) Check() error {
	if _, err := ParseProto(string(c.Proto)); err != nil {
		return err
	}
	if c.MaxHops < 1 || c.MaxHops > MaxHopsLimit {
		return fmt.Errorf("--max-hops %d: want 1 to %d", c.MaxHops, MaxHopsLimit)
	}
	if c.Probes < 1 || c.Probes > MaxProbesLimit {
		return fmt.Errorf("--probes %d: want 1 to %d", c.Probes, MaxProbesLimit)
	}
	if c.ProbeTimeout <= 0 || c.ProbeTimeout > time.Minute {
		return fmt.Errorf("--probe-timeout %v: want more than 0, at most 1m", c.ProbeTimeout)
	}
	if c.Total < 0 {
		return fmt.Errorf("--max-time %v: want 0 (max hops × probe timeout) or more", c.Total)
	}
	return nil
}

// Bound is how long the trace may take at most.
func (c Config) Bound() time.Duration {
	worst := time.Duration(c.MaxHops) * c.ProbeTimeout
	if c.Total > 0 && c.Total < worst {
		return c.Total
	}
	return worst
}

// None is a hop that did not answer, in a path.
const None = "*"

// PathKey is a path as one string: its hops joined by blanks.
func PathKey(path []string) string { return strings.Join(path, " ") }

// ParsePathKey is the path a PathKey wrote.
func ParsePathKey(s string) []string { return strings.Fields(s) }

// Changed says two paths differ: a different number of hops, or a hop
// where both answered from different addresses. A hop that answered in
// one and not in the other is no evidence of a change (routers drop and
// rate-limit their ICMP), so it is not counted as one.
func Changed(prev, cur []string) bool {
	if len(prev) != len(cur) {
		return true
	}
	for i := range prev {
		if prev[i] != None && cur[i] != None && prev[i] != cur[i] {
			return true
		}
	}
	return false
}
