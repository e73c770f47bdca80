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
var payload = []byte("wireperf trace probe" + strings.Repeat(".", MaxHopsLimit*MaxProbesLimit))

// udpHeaderLen is a UDP header's length.
const udpHeaderLen = 8

// probePayload is the payload of a probe: ICMP's the name, UDP's seq
// bytes longer.
func probePayload(p Probe) []byte {
	if p.Proto == UDP {
		return payload[:int(p.UDPLen)-udpHeaderLen]
	}
	return payload[:len("wireperf trace probe")]
}

// run sends the probes hop by hop, over IPv4 or IPv6 as dst is: a hop's probes go out together, and
// their answers are read from a raw ICMP socket until all came or the
// probe timeout passed. A raw socket is what reads a router's time
// exceeded for a UDP probe; Linux's unprivileged ICMP sockets hand those
// only to the socket that sent the probe, through its error queue.
func run(ctx context.Context, dst netip.Addr, cfg Config, r *Report) error {
	fam := ip4
	if dst.Is6() {
		fam = ip6
	}
	ic, err := icmp.ListenPacket(fam.network, fam.any)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return errors.New("trace: reading ICMP needs a raw socket: run as root or with CAP_NET_RAW")
		}
		return fmt.Errorf("trace: a raw ICMP socket: %w", err)
	}
	defer ic.Close()
	// Cancelling ctx ends the read that waits.
	stop := context.AfterFunc(ctx, func() { ic.SetReadDeadline(time.Now()) })
	defer stop()

	var udp *net.UDPConn
	var srcPort uint16
	if cfg.Proto == UDP {
		if udp, err = net.ListenUDP(fam.udp, nil); err != nil {
			return fmt.Errorf("trace: a UDP socket: %w", err)
		}
		defer udp.Close()
		srcPort = uint16(udp.LocalAddr().(*net.UDPAddr).Port)
	}
	// The echo identifier tells this trace's answers from other
	// processes' on the same host: every raw ICMP socket reads them all.
	id := uint16(rand.Uint32())
	deadline := time.Now().Add(cfg.Bound())
	buf := make([]byte, 1500)
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
		if err := fam.setTTL(ic, udp, ttl); err != nil {
			return fmt.Errorf("trace: setting TTL %d: %w", ttl, err)
		}
		for i := range probes {
			p := Probe{Proto: cfg.Proto, Dst: dst, SrcPort: srcPort, DstPort: BasePort, ID: id, Seq: uint16(seq),
				UDPLen: uint16(udpHeaderLen + len("wireperf trace probe") + seq)}
			seq++
			if err := pace.wait(ctx); err != nil {
				return err
			}
			sent[i] = time.Now()
			if err := fam.send(ic, udp, p); err != nil {
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
			ic.SetReadDeadline(hopDeadline)
			n, from, err := ic.ReadFrom(buf)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			if err != nil {
				return fmt.Errorf("trace: reading ICMP: %w", err)
			}
			at := time.Now()
			rep, err := fam.parse(buf[:n])
			if err != nil {
				continue // another's ICMP, or not about a probe
			}
			fromAddr := addrOf(from)
			for i, p := range probes {
				if !isNaN(hop.RTTs[i]) || !rep.Matches(p) {
					continue
				}
				// An echo reply is the destination's only when it comes
				// from it.
				if rep.Kind == EchoReply && fromAddr != dst {
					break
				}
				hop.RTTs[i] = ms(at.Sub(sent[i]))
				answered++
				if hop.Addr == "" {
					hop.Addr = fromAddr.String()
				}
				switch {
				case rep.Kind == EchoReply, rep.Kind == Unreachable && fromAddr == dst:
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

// setTTL sets the TTL (IPv6's hop limit) of the socket that sends the
// probes.
func (f family) setTTL(ic *icmp.PacketConn, udp *net.UDPConn, ttl int) error {
	switch {
	case udp != nil && f.udp == "udp4":
		return ipv4.NewConn(udp).SetTTL(ttl)
	case udp != nil:
		return ipv6.NewConn(udp).SetHopLimit(ttl)
	case f.udp == "udp4":
		return ic.IPv4PacketConn().SetTTL(ttl)
	}
	return ic.IPv6PacketConn().SetHopLimit(ttl)
}

func (f family) send(ic *icmp.PacketConn, udp *net.UDPConn, p Probe) error {
	if p.Proto == UDP {
		_, err := udp.WriteToUDPAddrPort(probePayload(p), netip.AddrPortFrom(p.Dst, p.DstPort))
		return err
	}
	// An ICMPv6 message's checksum covers a pseudo-header of addresses
	// this end doesn't pick: with none given, the kernel fills it in.
	m := icmp.Message{Type: f.echo, Body: &icmp.Echo{ID: int(p.ID), Seq: int(p.Seq), Data: probePayload(p)}}
	b, err := m.Marshal(nil)
	if err != nil {
		return err
	}
	_, err = ic.WriteTo(b, &net.IPAddr{IP: p.Dst.AsSlice()})
	return err
}

func addrOf(a net.Addr) netip.Addr {
	if ip, ok := a.(*net.IPAddr); ok {
		if x, ok := netip.AddrFromSlice(ip.IP); ok {
			return x.Unmap()
		}
	}
	return netip.Addr{}
}

func isNaN(f float64) bool { return f != f }
