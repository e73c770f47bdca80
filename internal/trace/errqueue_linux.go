package trace

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/ping"
)

// errQueueProber needs no privilege, as tracepath: its probes go out of
// an ordinary UDP socket (or an ICMP ping socket) with IP_RECVERR set,
// and the kernel hands the ICMP errors they cause (a router's time
// exceeded, the destination's port unreachable) to that socket only,
// through its error queue, with the address of the host that sent each.
// A ping socket also reads the destination's echo replies.
//
// The socket is a blocking file descriptor read with poll and
// MSG_DONTWAIT, not a net.Conn: Go's poller reports a socket whose only
// event is an error-queue entry as an error, not as readable.
type errQueueProber struct {
	fd      int
	v6      bool
	dst     netip.Addr
	proto   Proto
	srcPort uint16 // UDP's
	sa      unix.Sockaddr
	// pending are the probes sent at the current TTL and not yet
	// answered, in order: a router that quotes too little of a UDP probe
	// to tell which it was answers the first of them.
	pending  []Probe
	buf, oob []byte
}

func newErrQueueProber(dst netip.Addr, proto Proto) (*errQueueProber, error) {
	p := &errQueueProber{dst: dst, proto: proto, v6: dst.Is6(), buf: make([]byte, 1500), oob: make([]byte, 512)}
	domain, level, opt := unix.AF_INET, unix.SOL_IP, unix.IP_RECVERR
	if p.v6 {
		domain, level, opt = unix.AF_INET6, unix.SOL_IPV6, unix.IPV6_RECVERR
	}
	sockProto := 0
	if proto == ICMP {
		sockProto = unix.IPPROTO_ICMP
		if p.v6 {
			sockProto = unix.IPPROTO_ICMPV6
		}
	}
	fd, err := unix.Socket(domain, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, sockProto)
	if err != nil {
		if proto == ICMP && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
			return nil, fmt.Errorf("trace --proto icmp: %w", ping.SocketDenied())
		}
		return nil, fmt.Errorf("trace: a socket: %w", err)
	}
	p.fd = fd
	if err := unix.SetsockoptInt(fd, level, opt, 1); err != nil {
		p.close()
		return nil, fmt.Errorf("trace: IP_RECVERR: %w", err)
	}
	// The kernel's time of each answer's arrival: a hop's answers are
	// read once its probes are all out, up to MaxProbes/MaxProbeRate
	// after the first came.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		p.close()
		return nil, fmt.Errorf("trace: SO_TIMESTAMPNS: %w", err)
	}
	if p.v6 {
		p.sa = &unix.SockaddrInet6{Addr: dst.As16()}
		if proto == UDP {
			p.sa.(*unix.SockaddrInet6).Port = BasePort
		}
	} else {
		p.sa = &unix.SockaddrInet4{Addr: dst.As4()}
		if proto == UDP {
			p.sa.(*unix.SockaddrInet4).Port = BasePort
		}
	}
	if proto == UDP {
		// Bound now, so that its port is known: the probes all share one
		// flow (see Probe.UDPLen).
		var any unix.Sockaddr = &unix.SockaddrInet4{}
		if p.v6 {
			any = &unix.SockaddrInet6{}
		}
		if err := unix.Bind(fd, any); err != nil {
			p.close()
			return nil, fmt.Errorf("trace: binding a UDP socket: %w", err)
		}
		sa, err := unix.Getsockname(fd)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("trace: a UDP socket's port: %w", err)
		}
		switch a := sa.(type) {
		case *unix.SockaddrInet4:
			p.srcPort = uint16(a.Port)
		case *unix.SockaddrInet6:
			p.srcPort = uint16(a.Port)
		}
	}
	return p, nil
}

// probe is a probe of seq. A ping socket's echo identifier is the
// kernel's (the socket's own port), and the kernel gives the socket only
// its own answers: the identifier is left zero on both sides.
func (p *errQueueProber) probe(seq int) Probe {
	return Probe{Proto: p.proto, Dst: p.dst, SrcPort: p.srcPort, DstPort: BasePort, Seq: uint16(seq),
		UDPLen: uint16(udpHeaderLen + len(probeName) + seq)}
}

func (p *errQueueProber) close() { unix.Close(p.fd) }

func (p *errQueueProber) setTTL(ttl int) error {
	p.pending = p.pending[:0]
	if p.v6 {
		return unix.SetsockoptInt(p.fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, ttl)
	}
	return unix.SetsockoptInt(p.fd, unix.IPPROTO_IP, unix.IP_TTL, ttl)
}

func (p *errQueueProber) send(pr Probe) error {
	b := probePayload(pr)
	if pr.Proto == ICMP {
		var typ icmp.Type = ipv4.ICMPTypeEcho
		if p.v6 {
			typ = ipv6.ICMPTypeEchoRequest
		}
		// The kernel fills in the identifier and the checksum.
		m, err := (&icmp.Message{Type: typ, Body: &icmp.Echo{Seq: int(pr.Seq), Data: b}}).Marshal(nil)
		if err != nil {
			return err
		}
		b = m
	}
	var err error
	// An ICMP error on the queue is also the socket's pending error,
	// which the next send returns once (and clears): that send is tried
	// again.
	for range 4 {
		if err = unix.Sendto(p.fd, b, 0, p.sa); !isQueuedErrno(err) {
			break
		}
	}
	if err == nil {
		p.pending = append(p.pending, pr)
	}
	return err
}

// isQueuedErrno says err is what an ICMP error sets as a socket's error.
func isQueuedErrno(err error) bool {
	for _, e := range []error{unix.ECONNREFUSED, unix.EHOSTUNREACH, unix.ENETUNREACH, unix.EHOSTDOWN, unix.EPROTO, unix.EACCES} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// pollStep bounds one wait, so that a cancelled trace ends soon.
const pollStep = 100 * time.Millisecond

func (p *errQueueProber) read(ctx context.Context, deadline time.Time) (Reply, netip.Addr, time.Time, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Reply{}, netip.Addr{}, time.Time{}, err
		}
		rep, from, at, ok, err := p.readQueued()
		if err != nil {
			return Reply{}, netip.Addr{}, time.Time{}, err
		}
		if ok {
			return rep, from, at, nil
		}
		if p.proto == ICMP {
			if rep, from, at, ok, err = p.readEchoReply(); err != nil {
				return Reply{}, netip.Addr{}, time.Time{}, err
			}
			if ok {
				return rep, from, at, nil
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return Reply{}, netip.Addr{}, time.Time{}, errTimeout
		}
		wait = min(wait, pollStep)
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}} // POLLERR is always reported
		if _, err := unix.Poll(fds, int((wait+time.Millisecond-1)/time.Millisecond)); err != nil && !errors.Is(err, unix.EINTR) {
			return Reply{}, netip.Addr{}, time.Time{}, fmt.Errorf("poll: %w", err)
		}
	}
}

// readQueued reads one entry of the error queue, if there is one: ok
// says it is an answer to a probe, which came at at.
func (p *errQueueProber) readQueued() (Reply, netip.Addr, time.Time, bool, error) {
	for {
		n, oobn, _, _, err := unix.Recvmsg(p.fd, p.buf, p.oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return Reply{}, netip.Addr{}, time.Time{}, false, nil
		}
		if err != nil {
			return Reply{}, netip.Addr{}, time.Time{}, false, fmt.Errorf("reading the error queue: %w", err)
		}
		msgs, err := unix.ParseSocketControlMessage(p.oob[:oobn])
		if err != nil {
			continue
		}
		at := arrival(msgs)
		for _, m := range msgs {
			if !(m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR) &&
				!(m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR) {
				continue
			}
			q, err := parseQueuedError(m.Data)
			if err != nil {
				continue
			}
			if rep, ok := p.reply(q, p.buf[:n]); ok {
				return rep, q.Offender, at, true, nil
			}
		}
	}
}

// reply is the answer a queued ICMP error gives to one of the probes:
// quoted is what the kernel returns of the probe, its UDP payload or its
// ICMP message.
func (p *errQueueProber) reply(q queuedError, quoted []byte) (Reply, bool) {
	kind, ok := q.kind()
	if !ok {
		return Reply{}, false
	}
	rep := Reply{Kind: kind, Code: int(q.Code), Proto: p.proto, Dst: p.dst}
	if p.proto == ICMP {
		if len(quoted) < 8 {
			return Reply{}, false
		}
		rep.Seq = uint16(quoted[6])<<8 | uint16(quoted[7])
		return rep, true
	}
	rep.SrcPort, rep.DstPort = p.srcPort, BasePort
	switch {
	case len(quoted) >= len(probeName):
		rep.UDPLen = uint16(udpHeaderLen + len(quoted))
	case len(p.pending) > 0:
		rep.UDPLen = p.pending[0].UDPLen
	default:
		return Reply{}, false
	}
	for i, pr := range p.pending {
		if pr.UDPLen == rep.UDPLen {
			p.pending = append(p.pending[:i], p.pending[i+1:]...)
			break
		}
	}
	return rep, true
}

// readEchoReply reads an echo reply from a ping socket, if one came.
func (p *errQueueProber) readEchoReply() (Reply, netip.Addr, time.Time, bool, error) {
	for {
		n, oobn, _, from, err := unix.Recvmsg(p.fd, p.buf, p.oob, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return Reply{}, netip.Addr{}, time.Time{}, false, nil
		}
		if isQueuedErrno(err) {
			continue // the pending error of an entry on the queue
		}
		if err != nil {
			return Reply{}, netip.Addr{}, time.Time{}, false, fmt.Errorf("reading echo replies: %w", err)
		}
		msgs, _ := unix.ParseSocketControlMessage(p.oob[:oobn])
		parse := ParseReply
		if p.v6 {
			parse = ParseReply6
		}
		rep, err := parse(p.buf[:n])
		if err != nil || rep.Kind != EchoReply {
			continue
		}
		rep.ID = 0 // the kernel's identifier; see probe
		var addr netip.Addr
		switch a := from.(type) {
		case *unix.SockaddrInet4:
			addr = netip.AddrFrom4(a.Addr)
		case *unix.SockaddrInet6:
			addr = netip.AddrFrom16(a.Addr).Unmap()
		}
		return rep, addr, arrival(msgs), true, nil
	}
}

// arrival is the kernel's time of a message's arrival (SO_TIMESTAMPNS),
// or now when it gave none.
func arrival(msgs []unix.SocketControlMessage) time.Time {
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			var ts unix.Timespec
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)), m.Data)
			return time.Unix(ts.Unix())
		}
	}
	return time.Now()
}
