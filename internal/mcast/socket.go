package mcast

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// ReceiveBuffer is the receive socket buffer a receiver asks for, as
// udpflow's receivers do: enough that the tool does not measure itself
// (the kernel caps it at net.core.rmem_max).
const ReceiveBuffer = 8 << 20

// Listen opens a receiver's socket on g's port and joins g: any source,
// or g.Source only (IGMPv3/MLDv2 source-specific membership). The socket
// is bound to the group where the system allows it (not Windows), so
// that it hears that group alone, and shares its port with other
// receivers on the host (SO_REUSEADDR), as iperf 2's do.
func Listen(ctx context.Context, g Group) (*net.UDPConn, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	ifi, err := g.iface()
	if err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: reuseAddr}
	laddr := listenAddr(g.Addr)
	if g.Addr.Addr().Is6() && g.Interface != "" && laddr.Addr().IsLinkLocalMulticast() {
		laddr = netip.AddrPortFrom(laddr.Addr().WithZone(g.Interface), laddr.Port())
	}
	pc, err := lc.ListenPacket(ctx, g.network(), laddr.String())
	if err != nil {
		return nil, err
	}
	c := pc.(*net.UDPConn)
	_ = c.SetReadBuffer(ReceiveBuffer) // the kernel grants what it can; the report's counts stay exact
	group := &net.UDPAddr{IP: g.Addr.Addr().AsSlice()}
	if err := join(c, ifi, group, g.Source); err != nil {
		c.Close()
		return nil, fmt.Errorf("joining %v: %w", g.Addr.Addr(), err)
	}
	return c, nil
}

func join(c *net.UDPConn, ifi *net.Interface, group *net.UDPAddr, source netip.Addr) error {
	var src *net.UDPAddr
	if source.IsValid() {
		src = &net.UDPAddr{IP: source.AsSlice()}
	}
	if group.IP.To4() != nil {
		p := ipv4.NewPacketConn(c)
		if src != nil {
			return p.JoinSourceSpecificGroup(ifi, group, src)
		}
		return p.JoinGroup(ifi, group)
	}
	p := ipv6.NewPacketConn(c)
	if src != nil {
		return p.JoinSourceSpecificGroup(ifi, group, src)
	}
	return p.JoinGroup(ifi, group)
}

// SendOptions are a sender's socket options.
type SendOptions struct {
	// TTL is the datagrams' time to live (IPv6: hop limit), 1 to 255;
	// iperf 2's default is 1, which keeps them on the sender's link.
	TTL int
	// TOS is the IP TOS byte (IPv6: traffic class); 0 leaves it.
	TOS int
	// Bind is the local address, or the zero Addr for the routing
	// table's choice.
	Bind netip.Addr
	// Loopback delivers the datagrams to the sender's own host's
	// receivers too (IP_MULTICAST_LOOP, on by default in the kernel).
	NoLoopback bool
}

// SendConn is a sender's socket and the group it sends to. The socket is
// not connected: it takes its multicast options (the outgoing interface
// above all) before its first datagram, so the kernel chooses the source
// address on that interface and not by the routing table.
type SendConn struct {
	*net.UDPConn
	To *net.UDPAddr
}

// Dial opens a sender's socket to g with opt's TTL, TOS and outgoing
// interface (g.Interface).
func Dial(g Group, opt SendOptions) (*SendConn, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if opt.TTL < 0 || opt.TTL > 255 {
		return nil, fmt.Errorf("TTL %d: want 0 to 255", opt.TTL)
	}
	ifi, err := g.iface()
	if err != nil {
		return nil, err
	}
	laddr := &net.UDPAddr{}
	if opt.Bind.IsValid() {
		laddr.IP = opt.Bind.AsSlice()
	}
	to := net.UDPAddrFromAddrPort(g.Addr)
	if g.Addr.Addr().Is6() && g.Interface != "" {
		to.Zone = g.Interface
	}
	c, err := net.ListenUDP(g.network(), laddr)
	if err != nil {
		return nil, err
	}
	if err := sendOptions(c, ifi, opt, g.Addr.Addr().Is4()); err != nil {
		c.Close()
		return nil, err
	}
	return &SendConn{UDPConn: c, To: to}, nil
}

func sendOptions(c *net.UDPConn, ifi *net.Interface, opt SendOptions, v4 bool) error {
	if v4 {
		p := ipv4.NewPacketConn(c)
		if err := p.SetMulticastTTL(opt.TTL); err != nil {
			return fmt.Errorf("TTL %d: %w", opt.TTL, err)
		}
		if ifi != nil {
			if err := p.SetMulticastInterface(ifi); err != nil {
				return fmt.Errorf("interface %s: %w", ifi.Name, err)
			}
		}
		if opt.TOS != 0 {
			if err := p.SetTOS(opt.TOS); err != nil {
				return fmt.Errorf("TOS %#x: %w", opt.TOS, err)
			}
		}
		return p.SetMulticastLoopback(!opt.NoLoopback)
	}
	p := ipv6.NewPacketConn(c)
	if err := p.SetMulticastHopLimit(opt.TTL); err != nil {
		return fmt.Errorf("hop limit %d: %w", opt.TTL, err)
	}
	if ifi != nil {
		if err := p.SetMulticastInterface(ifi); err != nil {
			return fmt.Errorf("interface %s: %w", ifi.Name, err)
		}
	}
	if opt.TOS != 0 {
		if err := p.SetTrafficClass(opt.TOS); err != nil {
			return fmt.Errorf("traffic class %#x: %w", opt.TOS, err)
		}
	}
	return p.SetMulticastLoopback(!opt.NoLoopback)
}
