package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// ReplyKind is what an ICMP answer to a probe says.
type ReplyKind int

// The answers a probe can have.
const (
	TimeExceeded ReplyKind = iota + 1 // a router on the way: the TTL ran out
	Unreachable                       // the destination (port unreachable) or a router refusing
	EchoReply                         // the destination answering an echo request
)

// Reply is an ICMP message read as an answer to a probe: for an error
// (time exceeded, unreachable), what it quotes of the probe that caused
// it; for an echo reply, its identifier and sequence number.
type Reply struct {
	Kind ReplyKind
	Code int
	// Proto is the probe's: what the quoted datagram was, or ICMP for an
	// echo reply.
	Proto Proto
	// Dst is the quoted datagram's destination (zero for an echo reply).
	Dst              netip.Addr
	SrcPort, DstPort uint16 // a quoted UDP datagram's ports
	UDPLen           uint16 // and its length
	ID, Seq          uint16 // a quoted echo request's, or an echo reply's
}

// Probe is what identifies one probe sent.
type Probe struct {
	Proto            Proto
	Dst              netip.Addr
	SrcPort, DstPort uint16 // UDP
	// UDPLen tells a trace's UDP probes apart: they all share one flow
	// (addresses and ports), so that a router balancing flows over
	// equal-cost paths sends every probe the same way, and each has its
	// own length instead (as Paris traceroute keeps the flow).
	UDPLen  uint16
	ID, Seq uint16 // ICMP echo
}

// Matches says r answers p.
func (r Reply) Matches(p Probe) bool {
	if r.Proto != p.Proto {
		return false
	}
	if r.Kind == EchoReply {
		return p.Proto == ICMP && r.ID == p.ID && r.Seq == p.Seq
	}
	if r.Dst != p.Dst {
		return false
	}
	if p.Proto == UDP {
		return r.SrcPort == p.SrcPort && r.DstPort == p.DstPort && r.UDPLen == p.UDPLen
	}
	return r.ID == p.ID && r.Seq == p.Seq
}

// ErrNotProbeReply is an ICMP message that answers no probe: another
// type, or an error quoting something other than a UDP datagram or an
// echo request.
var ErrNotProbeReply = errors.New("not an answer to a probe")

// ParseReply reads an ICMPv4 message (without its IP header, as a raw
// ICMP socket reads it). Its bytes come from the network: every length
// is checked before it is used.
func ParseReply(b []byte) (Reply, error) {
	return parseReply(b, ipv4.ICMPTypeEchoReply.Protocol(), ipv4.ICMPTypeEchoReply, ipv4.ICMPTypeTimeExceeded,
		ipv4.ICMPTypeDestinationUnreachable, (*Reply).readQuoted)
}

// ParseReply6 reads an ICMPv6 message, as ParseReply an ICMPv4 one.
func ParseReply6(b []byte) (Reply, error) {
	return parseReply(b, ipv6.ICMPTypeEchoReply.Protocol(), ipv6.ICMPTypeEchoReply, ipv6.ICMPTypeTimeExceeded,
		ipv6.ICMPTypeDestinationUnreachable, (*Reply).readQuoted6)
}

// parseReply is ParseReply for either family: its protocol number, its
// three message types and the reader of the datagram an error quotes.
func parseReply(b []byte, proto int, echoReply, exceeded, unreachable icmp.Type, readQuoted func(*Reply, []byte) error) (Reply, error) {
	m, err := icmp.ParseMessage(proto, b)
	if err != nil {
		return Reply{}, fmt.Errorf("icmp: %w", err)
	}
	var quoted []byte
	r := Reply{Code: m.Code}
	switch m.Type {
	case echoReply:
		e, ok := m.Body.(*icmp.Echo)
		if !ok {
			return Reply{}, ErrNotProbeReply
		}
		r.Kind, r.Proto, r.ID, r.Seq = EchoReply, ICMP, uint16(e.ID), uint16(e.Seq)
		return r, nil
	case exceeded:
		te, ok := m.Body.(*icmp.TimeExceeded)
		if !ok {
			return Reply{}, ErrNotProbeReply
		}
		r.Kind, quoted = TimeExceeded, te.Data
	case unreachable:
		du, ok := m.Body.(*icmp.DstUnreach)
		if !ok {
			return Reply{}, ErrNotProbeReply
		}
		r.Kind, quoted = Unreachable, du.Data
	default:
		return Reply{}, ErrNotProbeReply
	}
	if err := readQuoted(&r, quoted); err != nil {
		return Reply{}, err
	}
	return r, nil
}

// readQuoted6 reads the start of the datagram an ICMPv6 error quotes:
// its IPv6 header and the first 8 bytes after it. A probe carries no
// extension header, so a quote with one is not about a probe.
func (r *Reply) readQuoted6(q []byte) error {
	if len(q) < ipv6.HeaderLen+8 {
		return fmt.Errorf("%w: quotes %d bytes, less than an IPv6 header and 8", ErrNotProbeReply, len(q))
	}
	if v := q[0] >> 4; v != 6 {
		return fmt.Errorf("%w: quotes an IP version %d header", ErrNotProbeReply, v)
	}
	r.Dst = netip.AddrFrom16([16]byte(q[24:40]))
	l4 := q[ipv6.HeaderLen : ipv6.HeaderLen+8]
	switch q[6] {
	case 17: // UDP
		r.Proto = UDP
		r.SrcPort, r.DstPort = binary.BigEndian.Uint16(l4[0:]), binary.BigEndian.Uint16(l4[2:])
		r.UDPLen = binary.BigEndian.Uint16(l4[4:])
	case 58: // ICMPv6
		if l4[0] != byte(ipv6.ICMPTypeEchoRequest) {
			return fmt.Errorf("%w: quotes an ICMPv6 message of type %d", ErrNotProbeReply, l4[0])
		}
		r.Proto = ICMP
		r.ID, r.Seq = binary.BigEndian.Uint16(l4[4:]), binary.BigEndian.Uint16(l4[6:])
	default:
		return fmt.Errorf("%w: quotes next header %d", ErrNotProbeReply, q[6])
	}
	return nil
}

// readQuoted reads the start of the datagram an ICMP error quotes: its
// IPv4 header and at least the first 8 bytes after it (RFC 792), which
// hold a UDP header's ports or an echo request's identifier and
// sequence number.
func (r *Reply) readQuoted(q []byte) error {
	if len(q) < ipv4.HeaderLen {
		return fmt.Errorf("%w: quotes %d bytes, less than an IPv4 header", ErrNotProbeReply, len(q))
	}
	if v := q[0] >> 4; v != 4 {
		return fmt.Errorf("%w: quotes an IP version %d header", ErrNotProbeReply, v)
	}
	ihl := int(q[0]&0x0f) * 4
	if ihl < ipv4.HeaderLen || len(q) < ihl+8 {
		return fmt.Errorf("%w: quotes a header of %d bytes in %d", ErrNotProbeReply, ihl, len(q))
	}
	r.Dst = netip.AddrFrom4([4]byte(q[16:20]))
	l4 := q[ihl : ihl+8]
	switch q[9] {
	case 17: // UDP
		r.Proto = UDP
		r.SrcPort, r.DstPort = binary.BigEndian.Uint16(l4[0:]), binary.BigEndian.Uint16(l4[2:])
		r.UDPLen = binary.BigEndian.Uint16(l4[4:])
	case 1: // ICMP
		if l4[0] != byte(ipv4.ICMPTypeEcho) {
			return fmt.Errorf("%w: quotes an ICMP message of type %d", ErrNotProbeReply, l4[0])
		}
		r.Proto = ICMP
		r.ID, r.Seq = binary.BigEndian.Uint16(l4[4:]), binary.BigEndian.Uint16(l4[6:])
	default:
		return fmt.Errorf("%w: quotes protocol %d", ErrNotProbeReply, q[9])
	}
	return nil
}
