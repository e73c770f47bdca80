package iperf3

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// A TOS per stream is refused before any connection: iperf3's protocol
// sends one --tos for every stream.
func TestClientRefusesStreamTOS(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := spec.Default()
	s.Streams, s.StreamTOS = 2, []int{0x20, 0xb8}
	port := ln.Addr().(*net.TCPAddr).Port
	res, err := RunClient(context.Background(), ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
	if res != nil || err == nil || !strings.Contains(err.Error(), "iperf3's protocol has no TOS per stream") {
		t.Fatalf("RunClient = %v, %v; want the refusal", res, err)
	}
	// The refusal came before any connection: none is waiting.
	_ = ln.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if c, err := ln.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		if c != nil {
			_ = c.Close()
		}
		t.Errorf("after the refusal the listener's Accept gave %v, want no connection", err)
	}
	conn, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := RunClientOn(context.Background(), conn, nil, ClientConfig{Spec: s}); res != nil || err == nil || !strings.Contains(err.Error(), "no TOS per stream") {
		t.Errorf("RunClientOn = %v, %v; want the refusal", res, err)
	}
}
