package control

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// fakeIperf3 is one connection's worth of an iperf3 server: idle (it says
// nothing until it has its cookie) or busy (ACCESS_DENIED at once). It
// reports what it read and whether the client hung up within 5 s.
type fakeIperf3 struct {
	addr string
	done chan fakeSeen
}

type fakeSeen struct {
	read   []byte
	hungUp bool
}

func startFakeIperf3(t *testing.T, busy bool) *fakeIperf3 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIperf3{addr: ln.Addr().String(), done: make(chan fakeSeen, 1)}
	go func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			f.done <- fakeSeen{}
			return
		}
		defer c.Close()
		if busy {
			_, _ = c.Write([]byte{0xff})
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(io.LimitReader(c, 64))
		f.done <- fakeSeen{read: b, hungUp: err == nil}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return f
}

func (f *fakeIperf3) config(t *testing.T) ClientConfig {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	return ClientConfig{Host: a.IP.String(), Port: a.Port, ConnectTimeout: 3 * time.Second, Spec: spec.Default()}
}

// TestIperf3ServerWithoutHandOff: a caller that takes no iperf3 test on
// gets an *Iperf3ServerError, and the iperf3 server its connection closed
// at once, not when the garbage collector finds it.
func TestIperf3ServerWithoutHandOff(t *testing.T) {
	for _, busy := range []bool{false, true} {
		f := startFakeIperf3(t, busy)
		_, err := Connect(context.Background(), f.config(t))
		var ip3 *Iperf3ServerError
		if !errors.As(err, &ip3) || ip3.Addr != f.addr {
			t.Fatalf("busy=%v: err = %v; want an *Iperf3ServerError for %s", busy, err, f.addr)
		}
		if seen := <-f.done; !seen.hungUp {
			t.Errorf("busy=%v: the connection to the iperf3 server stayed open", busy)
		}
	}
}

// TestIperf3ServerHandOff: with ClientConfig.KeepIperf3 the error hands
// over the open connection of an idle server, after the bytes already
// sent, for the caller to go on in iperf3's protocol.
func TestIperf3ServerHandOff(t *testing.T) {
	for _, busy := range []bool{false, true} {
		f := startFakeIperf3(t, busy)
		cfg := f.config(t)
		cfg.KeepIperf3 = true
		ctl, err := Connect(context.Background(), cfg)
		var ip3 *Iperf3ServerError
		if ctl != nil || !errors.As(err, &ip3) || ip3.Server == nil {
			t.Fatalf("busy=%v: Connect = %v, %v; want an *Iperf3ServerError with the server", busy, ctl, err)
		}
		got := *ip3.Server
		if got.Conn != nil {
			_ = got.Conn.Close()
		}
		seen := <-f.done
		switch {
		case got.Addr != f.addr:
			t.Errorf("busy=%v: hand-off for %q; want %q", busy, got.Addr, f.addr)
		case busy && got.Conn != nil:
			t.Errorf("busy server: a connection was handed off")
		case !busy && (got.Conn == nil || len(got.Sent) == 0 || string(seen.read) != string(got.Sent)):
			t.Errorf("idle server: handed off conn %v after %q; the server read %q", got.Conn, got.Sent, seen.read)
		}
		if !seen.hungUp {
			t.Errorf("busy=%v: the connection to the iperf3 server stayed open", busy)
		}
	}
}
