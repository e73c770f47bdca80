package sockopt

import (
	"net"
	"syscall"
	"testing"
)

// pair returns both ends of a loopback TCP connection on addr ("127.0.0.1:0"
// or "[::1]:0"), dialled with d. It skips when the address family is absent.
func pair(t *testing.T, network, addr string, d *net.Dialer) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s loopback: %v", network, err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	if d == nil {
		d = &net.Dialer{}
	}
	c, err := d.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	s := <-accepted
	if s == nil {
		c.Close()
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func rawConn(t *testing.T, c syscall.Conn) syscall.RawConn {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn: %v", err)
	}
	return rc
}
