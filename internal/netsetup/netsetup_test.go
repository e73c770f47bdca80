package netsetup

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

func TestTCPOptions(t *testing.T) {
	s := spec.Default()
	s.Window, s.MSS, s.NoDelay, s.Congestion, s.TOS, s.Rate = 1<<20, 1200, true, "reno", 0x10, 80e6
	s.SndTimeout = 1500 * time.Millisecond
	base := sockopt.Options{SndBuf: 1 << 20, RcvBuf: 1 << 20, NoDelay: true, Congestion: "reno", TOS: 0x10}
	tests := []struct {
		name           string
		client, sender bool
		mss            int
		pacing         uint64
		userTimeout    time.Duration // --snd-timeout: the client's sockets only, as iperf3's
	}{
		{"client sender", true, true, 1200, 10e6, 1500 * time.Millisecond},
		{"client receiver", true, false, 1200, 0, 1500 * time.Millisecond},
		{"server sender", false, true, 0, 10e6, 0},
		{"server receiver", false, false, 0, 0, 0},
	}
	for _, tt := range tests {
		want := base
		want.MSS, want.MaxPacingRate, want.UserTimeout = tt.mss, tt.pacing, tt.userTimeout
		if got := TCPOptions(s, tt.client, tt.sender); got != want {
			t.Errorf("%s: %+v; want %+v", tt.name, got, want)
		}
	}
	s.Protocol = spec.UDP // -b paces UDP in user space, never through the kernel
	if got := TCPOptions(s, true, true); got.MaxPacingRate != 0 {
		t.Errorf("UDP spec: pacing rate %d", got.MaxPacingRate)
	}
}

func TestUDPOptions(t *testing.T) {
	s := spec.Default()
	s.Protocol, s.TOS = spec.UDP, 0x20
	if got := UDPOptions(s, true); got != (sockopt.Options{RcvBuf: UDPReceiveBuffer, TOS: 0x20}) {
		t.Errorf("receiver without -w: %+v", got)
	}
	if got := UDPOptions(s, false); got != (sockopt.Options{TOS: 0x20}) {
		t.Errorf("sender without -w: %+v", got)
	}
	s.Window = 64 << 10
	if got := UDPOptions(s, true); got.RcvBuf != 64<<10 || got.SndBuf != 64<<10 {
		t.Errorf("-w 64K receiver: %+v", got)
	}
}

func TestDataPort(t *testing.T) {
	if got := (Client{}).DataPort(3); got != 0 {
		t.Errorf("no --cport: port %d", got)
	}
	c := Client{CPort: 5201}
	for id, want := range map[int]int{1: 5201, 2: 5202, 4: 5204} {
		if got := c.DataPort(id); got != want {
			t.Errorf("stream %d: port %d; want %d", id, got, want)
		}
	}
}

func TestDrainTime(t *testing.T) {
	s := spec.Default()
	if got := DrainTime(s, time.Millisecond); got != TCPDrainLimit {
		t.Errorf("TCP: %v", got)
	}
	s.Protocol = spec.UDP
	for rtt, want := range map[time.Duration]time.Duration{
		0:                     250 * time.Millisecond,
		50 * time.Millisecond: 450 * time.Millisecond,
		5 * time.Second:       5 * time.Second,
	} {
		if got := DrainTime(s, rtt); got != want {
			t.Errorf("UDP, RTT %v: %v; want %v", rtt, got, want)
		}
	}
}

// TestDialerBindsLocalPort: the local port and -B's address reach both
// kinds of socket (a UDP dialer given a TCP address silently binds none).
func TestDialerBindsLocalPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			_ = c.Close()
		}
	}()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c := Client{Bind: "127.0.0.1", CPort: loopback.FreePort(t), Timeout: 2 * time.Second}
	for network, addr := range map[string]string{"tcp": ln.Addr().String(), "udp": pc.LocalAddr().String()} {
		d, err := c.Dialer(network, c.DataPort(1), sockopt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := d.DialContext(context.Background(), network, addr)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		host, port := SplitHostPort(conn.LocalAddr().String())
		_ = conn.Close()
		if host != "127.0.0.1" || port != c.CPort {
			t.Errorf("%s: local address %s:%d; want 127.0.0.1:%d", network, host, port, c.CPort)
		}
	}
}

func TestDialerBadBind(t *testing.T) {
	_, err := Client{Bind: "no-such-host.invalid"}.Dialer("tcp", 0, sockopt.Options{})
	if err == nil || !strings.Contains(err.Error(), "-B no-such-host.invalid") {
		t.Fatalf("err = %v", err)
	}
}

func TestDialError(t *testing.T) {
	err := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	if got := DialError(err); !errors.Is(got, syscall.ECONNREFUSED) || strings.Contains(got.Error(), "dial") {
		t.Errorf("DialError = %v", got)
	}
	plain := errors.New("plain")
	if got := DialError(plain); got != plain {
		t.Errorf("DialError(plain) = %v", got)
	}
}

func TestSplitHostPort(t *testing.T) {
	if h, p := SplitHostPort("[::1]:5201"); h != "::1" || p != 5201 {
		t.Errorf("[::1]:5201 → %q %d", h, p)
	}
	if h, p := SplitHostPort("host"); h != "host" || p != 0 {
		t.Errorf("host → %q %d", h, p)
	}
}
