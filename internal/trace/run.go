package trace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/wireperf/wireperf/internal/ping"
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
	r := Report{Target: target, Addr: dst.String(), Proto: cfg.Proto, Raw: cfg.Raw, MaxHops: cfg.MaxHops, Probes: cfg.Probes, Started: time.Now().UTC(), Hops: []Hop{}}
	p, err := newProber(dst, cfg)
	if err != nil {
		return Report{}, err
	}
	defer p.close()
	err = hops(ctx, dst, cfg, p, &r)
	r.Ended = time.Now().UTC()
	return r, err
}

// resolve is target's address: its IPv4 address when it has one, else
// its IPv6 address.
func resolve(ctx context.Context, target string) (netip.Addr, error) {
	a, err := ping.Resolve(ctx, target, "ip")
	if err != nil {
		return netip.Addr{}, fmt.Errorf("trace %s: %w", target, err)
	}
	return a, nil
}

// prober sends a trace's probes and reads their answers: through a raw
// ICMP socket (Config.Raw), or through the error queue of the socket
// that sent them (the default, which needs no privilege).
type prober interface {
	// probe is the probe of sequence number seq.
	probe(seq int) Probe
	setTTL(ttl int) error
	send(p Probe) error
	// read returns the next answer to some probe (a reply, who sent it,
	// when it came), errTimeout once deadline passes, or ctx's error.
	read(ctx context.Context, deadline time.Time) (Reply, netip.Addr, time.Time, error)
	close()
}

// errTimeout is a read that reached its deadline.
var errTimeout = errors.New("no answer before the deadline")

// hops sends the probes hop by hop: a hop's probes go out together, and
// their answers are read until all came or the probe timeout passed.
func hops(ctx context.Context, dst netip.Addr, cfg Config, pr prober, r *Report) error {
	deadline := time.Now().Add(cfg.Bound())
	pace := newPacer()
	seq := 0
	for ttl := 1; ttl <= cfg.MaxHops; ttl++ {
		if !time.Now().Before(deadline) {
			r.Note = fmt.Sprintf("stopped at hop %d: the trace's time bound of %v ran out", ttl, cfg.Bound())
			return nil
		}
		hop := newHop(ttl, cfg.Probes)
		probes := make([]Probe, cfg.Probes)
		sent := make([]time.Time, cfg.Probes)
		if err := pr.setTTL(ttl); err != nil {
			return fmt.Errorf("trace: setting TTL %d: %w", ttl, err)
		}
		for i := range probes {
			p := pr.probe(seq)
			seq++
			if err := pace.wait(ctx); err != nil {
				return err
			}
			sent[i] = time.Now()
			if err := pr.send(p); err != nil {
				return fmt.Errorf("trace: probe at TTL %d: %w", ttl, err)
			}
			probes[i] = p
		}
		hopDeadline := time.Now().Add(cfg.ProbeTimeout)
		if hopDeadline.After(deadline) {
			hopDeadline = deadline
		}
		stopped := false // an unreachable from a router: nothing goes further
		for answered := 0; answered < cfg.Probes; {
			rep, from, at, err := pr.read(ctx, hopDeadline)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, errTimeout) {
				break
			}
			if err != nil {
				return fmt.Errorf("trace: reading answers: %w", err)
			}
			for i, p := range probes {
				if !isNaN(hop.RTTs[i]) || !rep.Matches(p) {
					continue
				}
				// An echo reply is the destination's only when it comes
				// from it.
				if rep.Kind == EchoReply && from != dst {
					break
				}
				hop.RTTs[i] = ms(at.Sub(sent[i]))
				answered++
				if hop.Addr == "" {
					hop.Addr = from.String()
				}
				switch {
				case rep.Kind == EchoReply, rep.Kind == Unreachable && from == dst:
					hop.Reached = true
				case rep.Kind == Unreachable:
					stopped = true
				}
				break
			}
		}
		r.Hops = append(r.Hops, hop)
		if hop.Reached {
			r.Reached = true
			return nil
		}
		if stopped {
			r.Note = fmt.Sprintf("stopped at hop %d: %s answered unreachable", ttl, hop.Addr)
			return nil
		}
	}
	return nil
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

func isNaN(f float64) bool { return f != f }
