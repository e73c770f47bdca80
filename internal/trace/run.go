package trace

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"
)

// Run traces the path to target (a host name or an IP address) and
// returns what it found. A trace that runs out of its time bound is
// returned with the hops so far and a note; an error is one that let no
// probe out (bad config, no address, no privilege, no socket).
func Run(ctx context.Context, target string, cfg Config) (Report, error) {
	if err := cfg.Check(); err != nil {
		return Report{}, err
	}
	dst, err := resolve(ctx, target)
	if err != nil {
		return Report{}, err
	}
	r := Report{Target: target, Addr: dst.String(), Proto: cfg.Proto, MaxHops: cfg.MaxHops, Probes: cfg.Probes, Started: time.Now().UTC(), Hops: []Hop{}}
	err = run(ctx, dst, cfg, &r)
	r.Ended = time.Now().UTC()
	return r, err
}

// resolve is target's address: its IPv4 address when it has one, else
// its IPv6 address.
func resolve(ctx context.Context, target string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(target); err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, fmt.Errorf("trace %s: an address with a zone is not traced", target)
		}
		return a.Unmap(), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", target)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("trace %s: %w", target, err)
	}
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("trace %s: no address", target)
	}
	return addrs[0].WithZone(""), nil
}

// newHop is a hop whose probes are all unanswered so far.
func newHop(ttl, probes int) Hop {
	h := Hop{TTL: ttl, RTTs: make([]float64, probes)}
	for i := range h.RTTs {
		h.RTTs[i] = math.NaN()
	}
	return h
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
