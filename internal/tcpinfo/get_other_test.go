//go:build !linux

package tcpinfo

import (
	"errors"
	"net"
	"testing"
)

func TestFallbackUnsupported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if info, err := Get(rc); info != nil || !errors.Is(err, ErrUnsupported) {
		t.Errorf("Get = %v, %v; want nil, ErrUnsupported", info, err)
	}
	if info, err := FromConn(ln.(*net.TCPListener)); info != nil || !errors.Is(err, ErrUnsupported) {
		t.Errorf("FromConn = %v, %v; want nil, ErrUnsupported", info, err)
	}
	if bbr, err := GetBBR(rc); bbr != nil || !errors.Is(err, ErrUnsupported) {
		t.Errorf("GetBBR = %v, %v; want nil, ErrUnsupported", bbr, err)
	}
}
