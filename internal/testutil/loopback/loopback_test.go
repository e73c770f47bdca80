package loopback

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePort(t *testing.T) {
	port := FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("TCP port %d is not free: %v", port, err)
	}
	defer ln.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("UDP port %d is not free: %v", port, err)
	}
	_ = pc.Close()
}
