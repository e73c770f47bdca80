package iperf3

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// TestClientCPort: --cport binds the data connections in iperf3 mode as
// it does natively; the iperf3 server sees them come from that port.
func TestClientCPort(t *testing.T) {
	for _, proto := range []string{spec.TCP, spec.UDP} {
		t.Run(proto, func(t *testing.T) {
			srv, port := startIperf3Server(t)
			cport := loopback.FreePort(t)
			s := clientSpec(func(s *spec.Spec) {
				s.Protocol = proto
				if proto == spec.UDP {
					s.Length, s.Rate = 1400, 10e6
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, CPort: cport, Spec: s})
			if err != nil {
				t.Fatalf("RunClient: %v", err)
			}
			doc := srv.json(t)
			if got := jsondoc.IntAt(t, doc, "start", "connected", 0, "remote_port"); got != int64(cport) {
				t.Errorf("iperf3 server saw the data stream from port %d; want --cport %d", got, cport)
			}
			if _, p := netsetup.SplitHostPort(res.Local.Streams[0].LocalAddr); p != cport {
				t.Errorf("our stream's local address %s; want port %d", res.Local.Streams[0].LocalAddr, cport)
			}
		})
	}
}

// nativeUDPRcvBuf is what the kernel grants a native wireperf UDP
// receiver that gives no -w.
func nativeUDPRcvBuf(t *testing.T) int {
	t.Helper()
	uc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	raw, err := uc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	s := spec.Default()
	s.Protocol = spec.UDP
	if err := sockopt.Apply(raw, netsetup.UDPOptions(s, true)); err != nil {
		t.Fatal(err)
	}
	info, err := sockopt.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	return info.RcvBuf
}

// TestUDPReceiveBufferAsNative: a UDP receiver without -w asks for the
// same buffer in iperf3 mode as natively, as client and as server.
func TestUDPReceiveBufferAsNative(t *testing.T) {
	want := nativeUDPRcvBuf(t)
	t.Run("client", func(t *testing.T) {
		_, port := startIperf3Server(t)
		s := clientSpec(func(s *spec.Spec) { s.Protocol, s.Length, s.Rate, s.Reverse = spec.UDP, 1400, 10e6, true })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
		if err != nil {
			t.Fatalf("RunClient: %v", err)
		}
		sock := res.Local.Streams[0].Socket
		if sock.RcvBufRequested != netsetup.UDPReceiveBuffer || sock.RcvBufGranted != int64(want) {
			t.Errorf("receive buffer requested %d, granted %d; natively %d, %d",
				sock.RcvBufRequested, sock.RcvBufGranted, netsetup.UDPReceiveBuffer, want)
		}
	})
	t.Run("server", func(t *testing.T) {
		srv := newTestServer(t, nil)
		runIperf3Client(t, srv, "-u", "-b", "10M", "-l", "1400", "-t", "1")
		sr := srv.next(t)
		if sr.err != nil || sr.res == nil {
			t.Fatalf("Serve: %v", sr.err)
		}
		sock := sr.res.Local.Streams[0].Socket
		if sock.RcvBufRequested != netsetup.UDPReceiveBuffer || sock.RcvBufGranted != int64(want) {
			t.Errorf("receive buffer requested %d, granted %d; natively %d, %d",
				sock.RcvBufRequested, sock.RcvBufGranted, netsetup.UDPReceiveBuffer, want)
		}
	})
}
