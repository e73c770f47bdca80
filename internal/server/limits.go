package server

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// Limits are what a server admits. Zero means no limit.
type Limits struct {
	MaxTests          int           // tests running at once, over all clients
	MaxTestsPerClient int           // tests running at once from one client prefix
	MaxStreams        int           // data connections of one test
	MaxDuration       time.Duration // length of one test
	// MaxTestMemory bounds one test's data buffers on this server: a
	// block of -l bytes per data connection (-P 128 -l 16M would be 2 GiB).
	MaxTestMemory int64
	// MaxMemory bounds the data buffers of all running tests together.
	MaxMemory int64
	// MaxTotalStreams bounds the data connections of all running tests.
	MaxTotalStreams int
	// MaxHandshakes bounds connections that are not yet part of a test,
	// over all clients and from one client prefix: past them a new
	// connection is closed at once.
	MaxHandshakes          int
	MaxHandshakesPerClient int
	// FirstByteTimeout is how long a new connection may stay silent
	// before it is closed (its first bytes say what it is); when every
	// handshake place is taken, a newcomer takes the place of the oldest
	// silent connection of the client holding the most places.
	FirstByteTimeout time.Duration
	// PrefixV4 and PrefixV6 are how many leading bits of an address make
	// one client for the per-client limits: an IPv6 host usually has a
	// whole /64 to pick addresses from.
	PrefixV4, PrefixV6 int
}

// DefaultMaxTestMemory admits every stream count at the default 1 MiB
// block, and 32 streams of the largest.
const DefaultMaxTestMemory = 512 << 20

// Defaults of the server-wide limits.
const (
	DefaultMaxTotalStreams = 1024
	// A connection in the handshake costs about 16 KiB (a goroutine, a
	// socket, a 4 KiB read buffer): the caps bound descriptors more than
	// memory. A -P 128 --bidir test's 257 connections may arrive at once.
	DefaultMaxHandshakes          = 1024
	DefaultMaxHandshakesPerClient = 2*spec.MaxStreams + 16
	DefaultFirstByteTimeout       = 3 * time.Second
	DefaultPrefixV4               = 32
	DefaultPrefixV6               = 64
)

// DefaultLimits keep one busy client from taking a shared server.
func DefaultLimits() Limits {
	return Limits{MaxTests: 16, MaxTestsPerClient: 4, MaxStreams: spec.MaxStreams, MaxDuration: 24 * time.Hour,
		MaxTestMemory: DefaultMaxTestMemory, MaxMemory: DefaultMaxMemory(), MaxTotalStreams: DefaultMaxTotalStreams,
		MaxHandshakes: DefaultMaxHandshakes, MaxHandshakesPerClient: DefaultMaxHandshakesPerClient, FirstByteTimeout: DefaultFirstByteTimeout,
		PrefixV4: DefaultPrefixV4, PrefixV6: DefaultPrefixV6}
}

// DefaultMaxMemory is a quarter of the machine's memory, or 1 GiB where
// that cannot be read.
func DefaultMaxMemory() int64 {
	if total := totalMemory(); total > 0 {
		return total / 4
	}
	return 1 << 30
}

// testMemory is what a test's data buffers take on this server.
func testMemory(s spec.Spec) int64 { return s.BufferBytes() }

// check refuses a spec that exceeds a per-test limit, with a reason the
// client can show as is.
func (l Limits) check(s spec.Spec) error {
	if l.MaxStreams > 0 && s.DataConns() > l.MaxStreams {
		return fmt.Errorf("server refuses %d data connections: its limit is %d (--max-streams)", s.DataConns(), l.MaxStreams)
	}
	if l.MaxDuration > 0 && s.Duration > l.MaxDuration {
		return fmt.Errorf("server refuses a %v test: its limit is %v (--max-duration)", s.Duration, l.MaxDuration)
	}
	if mem := testMemory(s); l.MaxTestMemory > 0 && mem > l.MaxTestMemory {
		return fmt.Errorf("server refuses %d data connections of %d-byte blocks (%d MiB of buffers): its limit is %d MiB (--max-test-memory); use a smaller -l or fewer streams",
			s.DataConns(), s.Length, mem>>20, l.MaxTestMemory>>20)
	}
	return nil
}

// clientOf is the prefix that counts as one client: the address's first
// PrefixV4 or PrefixV6 bits.
func (l Limits) clientOf(a net.Addr) string {
	var ip netip.Addr
	switch ta := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(ta.IP)
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(ta.IP)
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap()
	if !ip.IsValid() {
		return a.String()
	}
	bits := l.PrefixV6
	if ip.Is4() {
		bits = l.PrefixV4
	}
	if bits <= 0 || bits > ip.BitLen() {
		bits = ip.BitLen()
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return ip.String()
	}
	if bits == ip.BitLen() {
		return ip.String()
	}
	return p.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
