package control

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/spec"
)

// startVersion1Server is one connection of a server that predates
// protocol version 2: it answers a greeting of another version as such a
// server did (the error frame of its ParseGreeting), and a version 1
// greeting with its own. It reports the version it was greeted with.
func startVersion1Server(t *testing.T) (string, <-chan uint16) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	got := make(chan uint16, 1)
	go func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		var b [proto.GreetingLen]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return
		}
		v := binary.BigEndian.Uint16(b[4:6])
		got <- v
		if v != 1 {
			msg := fmt.Sprintf("%v: peer speaks %d, we speak %d", proto.ErrWrongVersion, v, 1)
			_ = proto.WriteFrame(c, proto.TypeError, proto.Error{Message: msg})
			return
		}
		_ = proto.WriteGreetingVersion(c, proto.MagicServer, 1, 0)
		_, _ = proto.ReadFrame(c)
		_ = proto.WriteFrame(c, proto.TypeError, proto.Error{Message: "server is busy: try again later"})
	}()
	return ln.Addr().String(), got
}

func versionClient(t *testing.T, addr string, s spec.Spec) ClientConfig {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ClientConfig{Host: a.IP.String(), Port: a.Port, ConnectTimeout: 3 * time.Second, Spec: s}
}

// An isochronous test greets with version 2, and a server that predates
// it refuses in one line that says what the client needs; any other test
// greets with version 1, which every server speaks.
func TestOlderServerRefusesIsochronousInOneLine(t *testing.T) {
	s := spec.Default()
	s.Protocol, s.Length, s.Rate = spec.UDP, 1448, 0
	s.Isochronous = &isoch.Frames{FPS: 60, Mean: 20e6}
	addr, greeted := startVersion1Server(t)
	ctl, err := Connect(context.Background(), versionClient(t, addr, s))
	if ctl != nil {
		ctl.Close()
		t.Fatal("an older server accepted an isochronous test")
	}
	if v := <-greeted; v != proto.VersionIsochronous {
		t.Errorf("greeted with version %d, want %d", v, proto.VersionIsochronous)
	}
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "predates isochronous UDP tests") || !strings.Contains(err.Error(), "peer speaks 2, we speak 1") {
		t.Errorf("Connect: %v; want one line saying the server predates isochronous tests, with its reason", err)
	}
	t.Log(err)

	addr, greeted = startVersion1Server(t)
	_, err = Connect(context.Background(), versionClient(t, addr, spec.Default()))
	if v := <-greeted; v != proto.Version {
		t.Errorf("a TCP test greeted with version %d, want %d", v, proto.Version)
	}
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "busy") {
		t.Errorf("a TCP test against a version 1 server: %v; want the server's own refusal after its greeting", err)
	}
}
