//go:build unix

package udpmux

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// reuseAddr lets a stream's socket bind the port the shared socket holds.
// Linux needs SO_REUSEADDR on every socket of the port; the BSDs want
// SO_REUSEPORT for UDP.
func reuseAddr(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		if serr == nil && reusePortToo {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}
	})
	if err != nil {
		return err
	}
	return serr
}
