package tcpinfo

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// mptcpPair connects a client to a listener on 127.0.0.1, each end asking
// for MPTCP or not, and moves n bytes from the client to the server.
func mptcpPair(t *testing.T, clientMPTCP, serverMPTCP bool, n int) (client, server *net.TCPConn) {
	t.Helper()
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled in this kernel (net.mptcp.enabled)")
	}
	var lc net.ListenConfig
	lc.SetMultipathTCP(serverMPTCP)
	ln, err := lc.Listen(t.Context(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var d net.Dialer
	d.SetMultipathTCP(clientMPTCP)
	c, err := d.DialContext(t.Context(), "tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	go func() { _, _ = c.Write(make([]byte, n)) }()
	if _, err := io.ReadFull(s, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func getMPTCP(t *testing.T, c syscall.Conn) (*MPTCP, error) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return GetMPTCP(rc)
}

// An MPTCP connection on loopback has one subflow, whose addresses are
// the connection's and whose counters hold what moved.
func TestGetMPTCPOneSubflow(t *testing.T) {
	const n = 1 << 20
	c, s := mptcpPair(t, true, true, n)
	for _, end := range []struct {
		name string
		conn *net.TCPConn
		sent bool
	}{{"client", c, true}, {"server", s, false}} {
		m, err := getMPTCP(t, end.conn)
		if err != nil {
			t.Fatalf("%s: %v", end.name, err)
		}
		if m.Fallback || m.SubflowCount != 1 || len(m.Subflows) != 1 {
			t.Fatalf("%s: fallback %v, %d subflows counted, %d listed; want an MPTCP connection of 1", end.name, m.Fallback, m.SubflowCount, len(m.Subflows))
		}
		sf := m.Subflows[0]
		if sf.Local != end.conn.LocalAddr().String() || sf.Remote != end.conn.RemoteAddr().String() {
			t.Errorf("%s: subflow %s -> %s, connection %s -> %s", end.name, sf.Local, sf.Remote, end.conn.LocalAddr(), end.conn.RemoteAddr())
		}
		if end.sent && sf.Info.BytesAcked < n || !end.sent && sf.Info.BytesReceived < n {
			t.Errorf("%s: subflow acked %d, received %d; %d bytes moved", end.name, sf.Info.BytesAcked, sf.Info.BytesReceived, n)
		}
		// The connection-level counts came with Linux 6.9; before, zero.
		if m.BytesSent != 0 || m.BytesReceived != 0 {
			if end.sent && m.BytesSent < n || !end.sent && m.BytesReceived < n {
				t.Errorf("%s: connection sent %d, received %d; %d bytes moved", end.name, m.BytesSent, m.BytesReceived, n)
			}
		}
	}
}

// A client that asks for MPTCP of a server that does not answer in MPTCP
// holds an MPTCP socket whose connection fell back to TCP; GetMPTCP says so.
func TestGetMPTCPFallback(t *testing.T) {
	c, s := mptcpPair(t, true, false, 1000)
	m, err := getMPTCP(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Fallback || len(m.Subflows) != 0 {
		t.Errorf("client of a plain TCP server: %+v; want a fallback", m)
	}
	if _, err := getMPTCP(t, s); !errors.Is(err, ErrNotMPTCP) {
		t.Errorf("plain TCP server's socket: %v; want ErrNotMPTCP", err)
	}
}

// Plain TCP on both ends is not MPTCP.
func TestGetMPTCPPlainTCP(t *testing.T) {
	c, _ := mptcpPair(t, false, true, 1000)
	if m, err := getMPTCP(t, c); !errors.Is(err, ErrNotMPTCP) {
		t.Errorf("plain TCP client: %+v, %v; want ErrNotMPTCP", m, err)
	}
}
