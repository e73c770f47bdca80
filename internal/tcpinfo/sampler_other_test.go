//go:build !linux

package tcpinfo

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestSamplerFallback(t *testing.T) {
	if u := Unavailable(); !strings.Contains(u, "TCP_INFO") || !strings.Contains(u, "RTT") {
		t.Errorf("Unavailable() = %q, want it to say what is missing", u)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(rc, SamplerConfig{Period: time.Millisecond})
	s.Start()
	// Without TCP_INFO the first sample fails and the sampler stops itself.
	waitClosed(t, s.done, "the sampler's own stop")
	tl := s.Stop()
	if !errors.Is(tl.Err, ErrUnsupported) || len(tl.Samples) != 0 {
		t.Errorf("timeline %+v, want no samples and ErrUnsupported", tl)
	}
}
