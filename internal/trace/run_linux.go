package trace

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// payload is what a probe carries: nothing a router reads, named so a
// capture tells who sent it. A UDP probe carries seq more bytes of it
// (Probe.UDPLen).
var payload = []byte(probeName + strings.Repeat(".", MaxHopsLimit*MaxProbesLimit))

const probeName = "wireperf trace probe"

// udpHeaderLen is a UDP header's length.
const udpHeaderLen = 8

// probePayload is the payload of a probe: ICMP's the name, UDP's seq
// bytes longer.
func probePayload(p Probe) []byte {
	if p.Proto == UDP {
		return payload[:int(p.UDPLen)-udpHeaderLen]
	}
	return payload[:len(probeName)]
}

// newProber opens the sockets of a trace to dst: a raw ICMP socket when
// cfg.Raw asks for one, else the unprivileged prober of errqueue_linux.go.
func newProber(dst netip.Addr, cfg Config) (prober, error) {
	if !cfg.Raw {
		return newErrQueueProber(dst, cfg.Proto)
	}
	return newRawProber(dst, cfg.Proto)
}

// rawProber reads every answer from a raw ICMP socket, which needs root
// or CAP_NET_RAW: it sees every ICMP message the host receives, so the
// echo identifier tells this trace's answers from other processes'.
type rawProber struct {
	fam     family
	dst     netip.Addr
	proto   Proto
	ic      *icmp.PacketConn
	udp     *net.UDPConn // UDP probes go out of it
	srcPort uint16
	id      uint16
	buf     []byte
}

func newRawProber(dst netip.Addr, proto Proto) (*rawProber, error) {
	fam := ip4
	if dst.Is6() {
		fam = ip6
	}
	ic, err := icmp.ListenPacket(fam.network, fam.any)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, errors.New("trace --raw: a raw ICMP socket needs root or CAP_NET_RAW (without --raw, trace needs neither)")
		}
		return nil, fmt.Errorf("trace: a raw ICMP socket: %w", err)
	}
	p := &rawProber{fam: fam, dst: dst, proto: proto, ic: ic, id: uint16(rand.Uint32()), buf: make([]byte, 1500)}
	if proto == UDP {
		if p.udp, err = net.ListenUDP(fam.udp, nil); err != nil {
			ic.Close()
			return nil, fmt.Errorf("trace: a UDP socket: %w", err)
		}
		p.srcPort = uint16(p.udp.LocalAddr().(*net.UDPAddr).Port)
	}
	return p, nil
}

func (p *rawProber) probe(seq int) Probe {
	return Probe{Proto: p.proto, Dst: p.dst, SrcPort: p.srcPort, DstPort: BasePort, ID: p.id, Seq: uint16(seq),
		UDPLen: uint16(udpHeaderLen + len(probeName) + seq)}
}

func (p *rawProber) close() {
	p.ic.Close()
	if p.udp != nil {
		p.udp.Close()
	}
}

// setTTL sets the TTL (IPv6's hop limit) of the socket that sends the
// probes.
func (p *rawProber) setTTL(ttl int) error {
	switch {
	case p.udp != nil && p.fam.udp == "udp4":
		return ipv4.NewConn(p.udp).SetTTL(ttl)
	case p.udp != nil:
		return ipv6.NewConn(p.udp).SetHopLimit(ttl)
	case p.fam.udp == "udp4":
		return p.ic.IPv4PacketConn().SetTTL(ttl)
	}
	return p.ic.IPv6PacketConn().SetHopLimit(ttl)
}

func (p *rawProber) send(pr Probe) error {
	if pr.Proto == UDP {
		_, err := p.udp.WriteToUDPAddrPort(probePayload(pr), netip.AddrPortFrom(pr.Dst, pr.DstPort))
		return err
	}
	// An ICMPv6 message's checksum covers a pseudo-header of addresses
	// this end doesn't pick: with none given, the kernel fills it in.
	m := icmp.Message{Type: p.fam.echo, Body: &icmp.Echo{ID: int(pr.ID), Seq: int(pr.Seq), Data: probePayload(pr)}}
	b, err := m.Marshal(nil)
	if err != nil {
		return err
	}
	_, err = p.ic.WriteTo(b, &net.IPAddr{IP: pr.Dst.AsSlice()})
	return err
}

func (p *rawProber) read(ctx context.Context, deadline time.Time) (Reply, netip.Addr, time.Time, error) {
	// Cancelling ctx ends the read that waits.
	stop := context.AfterFunc(ctx, func() { p.ic.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		p.ic.SetReadDeadline(deadline)
		n, from, err := p.ic.ReadFrom(p.buf)
		if ctx.Err() != nil {
			return Reply{}, netip.Addr{}, time.Time{}, ctx.Err()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return Reply{}, netip.Addr{}, time.Time{}, errTimeout
		}
		if err != nil {
			return Reply{}, netip.Addr{}, time.Time{}, fmt.Errorf("reading ICMP: %w", err)
		}
		at := time.Now()
		rep, err := p.fam.parse(p.buf[:n])
		if err != nil {
			continue // another's ICMP, or not about a probe
		}
		return rep, addrOf(from), at, nil
	}
}

// family is what differs between tracing over IPv4 and over IPv6.
type family struct {
	network, any, udp string // the raw ICMP socket's network and address, the UDP socket's network
	echo              icmp.Type
	parse             func([]byte) (Reply, error)
}

var (
	ip4 = family{"ip4:icmp", "0.0.0.0", "udp4", ipv4.ICMPTypeEcho, ParseReply}
	ip6 = family{"ip6:ipv6-icmp", "::", "udp6", ipv6.ICMPTypeEchoRequest, ParseReply6}
)

func addrOf(a net.Addr) netip.Addr {
	if ip, ok := a.(*net.IPAddr); ok {
		if x, ok := netip.AddrFromSlice(ip.IP); ok {
			return x.Unmap()
		}
	}
	return netip.Addr{}
}
