package mcast

import (
	"net/netip"
	"syscall"
)

// reuseAddr lets several receivers of a host share a group's port.
func reuseAddr(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// listenAddr is the wildcard: Windows binds no socket to a group.
func listenAddr(g netip.AddrPort) netip.AddrPort {
	if g.Addr().Is4() {
		return netip.AddrPortFrom(netip.IPv4Unspecified(), g.Port())
	}
	return netip.AddrPortFrom(netip.IPv6Unspecified(), g.Port())
}
