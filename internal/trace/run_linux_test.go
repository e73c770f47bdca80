package trace

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRunLoopback traces to loopback, where the first hop is the
// destination: it answers a UDP probe with a port unreachable and an
// echo request with a reply, over IPv4 and IPv6, read from the error
// queue (and a ping socket) or from a raw socket.
func TestRunLoopback(t *testing.T) {
	for _, c := range []struct {
		proto Proto
		addr  string
		raw   bool
	}{{UDP, "127.0.0.1", false}, {ICMP, "127.0.0.1", false}, {UDP, "::1", false}, {ICMP, "::1", false},
		{UDP, "127.0.0.1", true}, {ICMP, "127.0.0.1", true}, {UDP, "::1", true}, {ICMP, "::1", true}} {
		proto := c.proto
		name := string(proto) + " " + c.addr
		if c.raw {
			name += " raw"
		}
		t.Run(name, func(t *testing.T) {
			if c.raw && os.Geteuid() != 0 {
				t.Skip("needs root: a raw ICMP socket")
			}
			cfg := Config{Proto: proto, MaxHops: 4, Probes: 2, ProbeTimeout: 2 * time.Second, Raw: c.raw}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if c.addr == "::1" {
				if ln, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
					t.Skipf("no IPv6 loopback: %v", err)
				} else {
					ln.Close()
				}
			}
			r, err := Run(ctx, c.addr, cfg)
			if err != nil && proto == ICMP && !c.raw && strings.Contains(err.Error(), "ping_group_range") {
				t.Skipf("ping sockets not permitted here: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !r.Reached || len(r.Hops) != 1 || r.Hops[0].Addr != c.addr || !r.Hops[0].Reached {
				t.Fatalf("report %+v, want %s reached at hop 1", r, c.addr)
			}
			for _, rtt := range r.Hops[0].RTTs {
				if !(rtt >= 0) {
					t.Fatalf("RTTs %v: a probe unanswered on loopback", r.Hops[0].RTTs)
				}
			}
		})
	}
}

func TestRunRefuses(t *testing.T) {
	if _, err := Run(context.Background(), "fe80::1%lo", DefaultConfig()); err == nil || !strings.Contains(err.Error(), "zone") {
		t.Fatalf("an address with a zone: %v", err)
	}
	if _, err := Run(context.Background(), "127.0.0.1", Config{Proto: UDP}); err == nil {
		t.Fatal("an empty config ran")
	}
}

// A destination that never answers (a socket open on the probes' port
// takes them silently) is traced until the time bound, which the report
// notes; each silent hop is a hop without an address.
func TestRunTimeBound(t *testing.T) {
	ln, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: BasePort})
	if err != nil {
		t.Skipf("the probes' port is taken: %v", err)
	}
	defer ln.Close()
	cfg := Config{Proto: UDP, MaxHops: 10, Probes: 1, ProbeTimeout: 200 * time.Millisecond, Total: 500 * time.Millisecond}
	began := time.Now()
	r, err := Run(context.Background(), "127.0.0.1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("took %v past a bound of %v", took, cfg.Total)
	}
	if r.Reached || len(r.Hops) < 1 || len(r.Hops) > 3 || !strings.Contains(r.Note, "time bound") {
		t.Fatalf("report %+v: want 1 to 3 silent hops (2 or 3 unless the machine stalls) and a note of the bound", r)
	}
	for _, h := range r.Hops {
		if h.Addr != "" || !isNaN(h.RTTs[0]) {
			t.Fatalf("hop %+v answered", h)
		}
	}
	if len(r.Path()) != 0 {
		t.Fatalf("path %q of silent hops, want none", r.Path())
	}
}
