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
