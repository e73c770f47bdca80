// Package netsetup is how wireperf sets up its sockets, the same way in
// its own protocol and in iperf3's: the options a spec asks for on each
// kind of socket, the client's dialer (-B, --cport, the connect timeout),
// how long receivers drain after the senders stop, and the host's socket
// limits that a report shows.
package netsetup

import (
	"net"
	"net/netip"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// UDPReceiveBuffer is what a UDP receiver asks for when the spec sets no
// window: a receiver that overflows its buffer during a scheduling hiccup
// measures itself, not the path (the kernel caps it at rmem_max).
const UDPReceiveBuffer = 8 << 20

// TCPOptions are the options a spec asks for on one TCP data socket. The
// MSS (and --snd-timeout, as iperf3's) goes only on the client's socket, before connect, where the SYN
// announces it and so binds both directions. A sender with -b gets the
// kernel's pacing rate: the kernel paces each stream, no timer of ours.
func TCPOptions(s spec.Spec, client, sender bool) sockopt.Options {
	o := sockopt.Options{
		SndBuf:     int(s.Window),
		RcvBuf:     int(s.Window),
		NoDelay:    s.NoDelay,
		Congestion: s.Congestion,
		TOS:        s.TOS,
	}
	if client {
		o.MSS = s.MSS
		o.UserTimeout = s.SndTimeout
	}
	if sender && s.Protocol == spec.TCP && s.Rate > 0 {
		o.MaxPacingRate = uint64(s.Rate / 8)
	}
	if sender {
		o.MaxPacingRate = fqPacing(o.MaxPacingRate, s)
	}
	return o
}

// StreamTCPOptions are TCPOptions for data stream id (1 to
// s.DataConns()): its own TOS where the spec gives one per stream
// (spec.Spec.StreamTOS), as both ends set it.
func StreamTCPOptions(s spec.Spec, id int, client, sender bool) sockopt.Options {
	o := TCPOptions(s, client, sender)
	o.TOS = s.TOSOn(id)
	return o
}

// fqPacing adds --fq-rate to a sender's pacing rate (bytes/s): with -b
// as well, the lower of the two caps holds, as both would.
func fqPacing(rate uint64, s spec.Spec) uint64 {
	if s.FQRate <= 0 {
		return rate
	}
	fq := uint64(s.FQRate / 8)
	if rate == 0 || fq < rate {
		return fq
	}
	return rate
}

// UDPOptions are the options a spec asks for on one UDP data socket; a
// receiver without -w asks for UDPReceiveBuffer.
func UDPOptions(s spec.Spec, receiver bool) sockopt.Options {
	o := sockopt.Options{SndBuf: int(s.Window), RcvBuf: int(s.Window), TOS: s.TOS, DontFragment: s.DontFragment}
	if receiver && o.RcvBuf == 0 {
		o.RcvBuf = UDPReceiveBuffer
	}
	if !receiver {
		o.MaxPacingRate = fqPacing(0, s)
	}
	return o
}

// SetupAccepted applies a spec's options to TCP data stream id, a
// connection the server accepted, then Nagle as SetNagle does.
func SetupAccepted(c *net.TCPConn, s spec.Spec, id int, sender bool) error {
	if o := StreamTCPOptions(s, id, false, sender); o != (sockopt.Options{}) {
		raw, err := c.SyscallConn()
		if err != nil {
			return err
		}
		if err := sockopt.Apply(raw, o); err != nil {
			return mptcpRefusal(c, err)
		}
	}
	SetNagle(c, s)
	return nil
}

// SetNagle gives -N iperf's meaning: Go turns Nagle's algorithm off on
// every TCP connection, so without -N it is turned back on.
func SetNagle(c *net.TCPConn, s spec.Spec) { _ = c.SetNoDelay(s.NoDelay) }

// LocalLimits are this host's socket limits for a report. A network
// namespace hides some of them (net.core.rmem_max); what could be read is
// still worth reporting, so only a host where nothing could be read gives nil.
func LocalLimits() *result.Limits {
	l, err := hostmon.ReadLimits()
	if err != nil && l.RmemMax == 0 && l.TCPRmem[2] == 0 && l.Congestion == "" {
		return nil
	}
	return &result.Limits{
		RmemMax: l.RmemMax, WmemMax: l.WmemMax,
		TCPRmem: l.TCPRmem, TCPWmem: l.TCPWmem,
		Congestion: l.Congestion, DefaultQdisc: l.DefaultQdisc,
	}
}

// LimitsFor are LocalLimits with the interface that holds localAddr (a
// socket's local "host:port", as a stream's LocalAddr, or a bare address)
// and the kind of that interface's root qdisc. The lookup runs in the
// calling thread's network namespace, where the caller's sockets are.
// Without them the limits are still worth reporting: a failed lookup
// leaves both empty.
func LimitsFor(localAddr string) *result.Limits {
	l := LocalLimits()
	if l == nil {
		return nil
	}
	addr, err := parseLocalAddr(localAddr)
	if err != nil {
		return l
	}
	if q, err := hostmon.ReadRootQdisc(addr); err == nil {
		l.Interface, l.Qdisc = q.Interface, q.Kind
	}
	return l
}

// StreamLimits are LimitsFor the first data stream's local address: the
// interface the test's data leaves by.
func StreamLimits(streams []result.Stream) *result.Limits {
	for _, s := range streams {
		if s.LocalAddr != "" {
			return LimitsFor(s.LocalAddr)
		}
	}
	return LocalLimits()
}

func parseLocalAddr(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), nil
	}
	return netip.ParseAddr(s)
}

// TCPDrainLimit bounds how long a TCP receiver reads after the peer's
// senders stopped. TCP delivers everything it accepted, however long that
// takes on a slow path, and the sender's close ends the drain sooner.
const TCPDrainLimit = 10 * time.Second

// DrainTime is how long receivers keep reading once the peer's senders
// have stopped: TCP's bound, or for UDP a few round trips of the control
// connection (data still in flight arrives by then or not at all).
func DrainTime(s spec.Spec, controlRTT time.Duration) time.Duration {
	if s.Protocol != spec.UDP {
		return TCPDrainLimit
	}
	return min(5*time.Second, 4*controlRTT+250*time.Millisecond)
}

// SmoothedRTT is a TCP connection's smoothed round-trip time from
// TCP_INFO; 0 where the system does not say.
func SmoothedRTT(c *net.TCPConn) time.Duration {
	info, err := tcpinfo.FromConn(c)
	if err != nil {
		return 0
	}
	return time.Duration(info.RTTus) * time.Microsecond
}
