package server

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// Limits are what a server admits. Zero means no limit.
type Limits struct {
	MaxTests          int           // tests running at once, over all clients
	MaxTestsPerClient int           // tests running at once from one client prefix
	MaxStreams        int           // data connections of one test
	MaxDuration       time.Duration // length of one test
	// BitrateLimit ends a running test whose streams together move more
	// bits per second than this, on average over BitrateWindow: iperf3's
	// --server-bitrate-limit (native clients).
	BitrateLimit  float64
	BitrateWindow time.Duration
	// TotalBitrateLimit bounds what all running tests move together, on
	// average over TotalBitrateWindow: a test is refused while the total
	// and the rate it asks for are over it, and once the total is over it
	// for a whole window the newest test is ended (tests that started
	// inside the limit keep running).
	TotalBitrateLimit  float64
	TotalBitrateWindow time.Duration
	// ClientDailyBytes is what one client prefix may move (both ways,
	// over all its tests) in a UTC day: past it a running test is ended
	// and new ones are refused until midnight UTC.
	ClientDailyBytes int64
	// MaxTestMemory bounds what one test holds on this server (testMemory):
	// a block of -l bytes per data connection (-P 128 -l 16M would be 2
	// GiB), and the interval rows the server keeps of it.
	MaxTestMemory int64
	// MaxMemory bounds the same for all running tests together.
	MaxMemory int64
	// MinKeylessInterval is the shortest -i admitted from a client that
	// proved no key (any native client of a server without keys, and
	// every iperf3 client): each row costs the server a cut of every
	// stream, a frame to the client and a line of its report.
	MinKeylessInterval time.Duration
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
// block, and 32 streams of the largest, with the most rows a server keeps
// of a test (flowrun.ServerStreamRows, 32 MiB): 544 MiB.
const DefaultMaxTestMemory = 512<<20 + flowrun.ServerStreamRows*flowrun.StreamRowBytes

// DefaultMinKeylessInterval is iperf3's own floor on -i, 0.1 s: a
// stranger's -P 128 then costs 1,280 stream rows a second, where -i 0.01
// would cost 12,800.
const DefaultMinKeylessInterval = 100 * time.Millisecond

// DefaultBitrateWindow is iperf3's averaging window for
// --server-bitrate-limit.
const DefaultBitrateWindow = 5 * time.Second

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
	return Limits{MaxTests: 16, MaxTestsPerClient: 4, MaxStreams: spec.MaxStreams, MaxDuration: 24 * time.Hour, BitrateWindow: DefaultBitrateWindow, TotalBitrateWindow: DefaultBitrateWindow,
		MaxTestMemory: DefaultMaxTestMemory, MinKeylessInterval: DefaultMinKeylessInterval, MaxMemory: DefaultMaxMemory(), MaxTotalStreams: DefaultMaxTotalStreams,
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

// testMemory is what a test holds on this server: its data buffers, and
// the interval rows kept of it (flowrun.KeptStreamRows: rows × streams,
// the test's length over its -i, at most flowrun.ServerStreamRows) at
// flowrun.StreamRowBytes each. A test that stops on bytes is charged for
// the longest test admitted. A --trip-times test is charged its streams'
// latency histograms too, and an isochronous test its receivers' frame
// accounting.
func (l Limits) testMemory(s spec.Spec) (buffers, rows int64) {
	buffers = s.BufferBytes()
	if s.TripTimes {
		// Each stream's block timing, charged on every data connection:
		// the server receives on some or (--bidir) all of them.
		buffers += int64(s.DataConns()) * tcpflow.TripReaderBytes
	}
	if s.Isochronous != nil { // each receiver's frame accounting
		buffers += int64(s.DataConns()) * udpflow.FrameAcctBytes
	}
	return buffers, flowrun.KeptStreamRows(s, l.MaxDuration, flowrun.ServerStreamRows) * flowrun.StreamRowBytes
}

// check refuses a spec that exceeds a per-test limit, with a reason the
// client can show as is: a client that proved a key.
func (l Limits) check(s spec.Spec) error { return l.checkFrom(s, true) }

// checkFrom is check for a client that proved a key (keyed) or not.
func (l Limits) checkFrom(s spec.Spec, keyed bool) error {
	if l.MaxStreams > 0 && s.DataConns() > l.MaxStreams {
		return fmt.Errorf("server refuses %d data connections: its limit is %d (--max-streams)", s.DataConns(), l.MaxStreams)
	}
	if l.MaxDuration > 0 && s.Duration > l.MaxDuration {
		return refusal{fmt.Sprintf("server refuses a %v test: its limit is %v (--max-duration)", s.Duration, l.MaxDuration), iperf3.ErrMaxDuration}
	}
	if !keyed && l.MinKeylessInterval > 0 && s.Interval > 0 && s.Interval < l.MinKeylessInterval {
		return fmt.Errorf("server refuses -i %v from a client without a key: its shortest is %v (--min-keyless-interval)", s.Interval, l.MinKeylessInterval)
	}
	buffers, rows := l.testMemory(s)
	if mem := buffers + rows; l.MaxTestMemory > 0 && mem > l.MaxTestMemory {
		return fmt.Errorf("server refuses a test of %d MiB: %d data connections of %d-byte blocks (%d MiB of buffers) and %d MiB of interval rows kept; its limit is %d MiB (--max-test-memory); use a smaller -l, fewer streams or a longer -i",
			mem>>20, s.DataConns(), s.Length, buffers>>20, rows>>20, l.MaxTestMemory>>20)
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
