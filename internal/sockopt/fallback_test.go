//go:build !linux

package sockopt

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// No platform but Linux has per-socket congestion control: asking must
// fail up front, naming the option, rather than be silently ignored.
func TestFallbackCongestionUnsupported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	err = Apply(rc, Options{Congestion: "bbr"})
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), `TCP_CONGESTION "bbr"`) {
		t.Errorf("Apply(Congestion) = %v, want ErrUnsupported naming TCP_CONGESTION", err)
	}
}
