package session_test

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// checkControlSocket reads the keepalive and the bound device of c.
func checkControlSocket(t *testing.T, c *net.TCPConn, idle, interval, count int, dev string) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got [4]int
	var gotDev string
	err = raw.Control(func(fd uintptr) {
		for i, opt := range []struct{ level, name int }{
			{unix.SOL_SOCKET, unix.SO_KEEPALIVE}, {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
			{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL}, {unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
		} {
			got[i], _ = unix.GetsockoptInt(int(fd), opt.level, opt.name)
		}
		gotDev, _ = unix.GetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := [4]int{1, idle, interval, count}; got != want {
		t.Errorf("keepalive on, idle, interval, count = %v, want %v", got, want)
	}
	if gotDev != dev {
		t.Errorf("SO_BINDTODEVICE = %q, want %q", gotDev, dev)
	}
}
