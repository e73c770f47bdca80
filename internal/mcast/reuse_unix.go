//go:build !windows

package mcast

import (
	"net/netip"
	"syscall"
)

// reuseAddr lets several receivers of a host share a group's port.
func reuseAddr(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// listenAddr is the group itself: the socket hears that group alone.
func listenAddr(g netip.AddrPort) netip.AddrPort { return g }
