// Package mcast is the data plane of multicast tests, iperf 2's way: a
// paced sender of iperf 2 datagrams to a group (with its TTL and
// outgoing interface), and a receiver that joins the group, any-source or
// source-specific (IGMPv3, MLDv2), and accounts for each sender it hears
// on its own; no control channel, and a receiver sends nothing back
// (docs/multicast.md).
package mcast

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Group is where a multicast test's datagrams go, and how a receiver
// joins it.
type Group struct {
	// Addr is the group and the port.
	Addr netip.AddrPort
	// Source is a source-specific join's sender (iperf 2's -H); the zero
	// Addr joins any source.
	Source netip.Addr
	// Interface is the network interface the datagrams go out of or are
	// received on; "" lets the routing table choose.
	Interface string
}

// IsGroup reports whether host is a multicast group address, with an
// optional %DEV (iperf 2's way of naming the interface): what makes a
// client or a server's -B a multicast test's.
func IsGroup(host string) bool {
	a, _, err := SplitAddr(host)
	return err == nil && a.IsMulticast()
}

// SplitAddr reads ADDR or ADDR%DEV, IPv4 or IPv6 (an IPv6 zone is the
// interface), with the IPv6 brackets allowed.
func SplitAddr(s string) (netip.Addr, string, error) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	host, dev, _ := strings.Cut(s, "%")
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, "", fmt.Errorf("%q is not an IP address", s)
	}
	if dev == "" && s != host {
		return netip.Addr{}, "", fmt.Errorf("%q: an empty interface after %%", s)
	}
	return a.Unmap(), dev, nil
}

// Check says what is wrong with g, if anything: a group that is not one,
// a source of the other family or itself a group, a port out of range.
func (g Group) Check() error {
	a := g.Addr.Addr()
	switch {
	case !a.IsMulticast():
		return fmt.Errorf("%v is not a multicast group (224.0.0.0/4, ff00::/8)", a)
	case g.Addr.Port() == 0:
		return errors.New("a multicast test needs a port")
	case g.Source.IsValid() && g.Source.Is4() != a.Is4():
		return fmt.Errorf("source %v and group %v: not the same address family", g.Source, a)
	case g.Source.IsValid() && (g.Source.IsMulticast() || g.Source.IsUnspecified()):
		return fmt.Errorf("source %v: a source-specific join names a sender's unicast address", g.Source)
	}
	return nil
}

// iface is the interface named, or nil for the routing table's choice.
func (g Group) iface() (*net.Interface, error) {
	if g.Interface == "" {
		return nil, nil
	}
	ifi, err := net.InterfaceByName(g.Interface)
	if err != nil {
		return nil, fmt.Errorf("interface %q: %w", g.Interface, err)
	}
	return ifi, nil
}

func (g Group) network() string {
	if g.Addr.Addr().Is4() {
		return "udp4"
	}
	return "udp6"
}
