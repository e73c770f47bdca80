// Package loopback gives tests what they need on 127.0.0.1. Only tests
// import it.
package loopback

import (
	"net"
	"strconv"
	"testing"
)

// FreePort is a port free on 127.0.0.1 for both TCP and UDP a moment ago,
// for a test that must name its port before it listens or dials.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = pc.Close()
		return port
	}
	t.Fatal("no port free for both TCP and UDP on 127.0.0.1")
	return 0
}

// UDPPair is two UDP sockets on 127.0.0.1 connected to each other, closed
// when the test ends.
func UDPPair(t testing.TB) (a, b *net.UDPConn) {
	t.Helper()
	// Hold a's port while b takes its own, so that the kernel can't hand
	// out the same port twice; then connect a to b from the port it held.
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	aAddr := l.LocalAddr().(*net.UDPAddr)
	b, err = net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, aAddr)
	if err != nil {
		_ = l.Close()
		t.Fatal(err)
	}
	_ = l.Close()
	a, err = net.DialUDP("udp", aAddr, b.LocalAddr().(*net.UDPAddr))
	if err != nil {
		_ = b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// TCPPair is a connected pair of TCP sockets on 127.0.0.1, closed when
// the test ends.
func TCPPair(t testing.TB) (a, b *net.TCPConn) {
	t.Helper()
	l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err = net.DialTCP("tcp", nil, l.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	b, err = l.AcceptTCP()
	if err != nil {
		_ = a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}
