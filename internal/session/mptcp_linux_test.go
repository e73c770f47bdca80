package session_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

func needMPTCP(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled in this kernel (net.mptcp.enabled)")
	}
}

// -m on loopback, in each direction and with several streams: every
// stream, at both ends, is an MPTCP connection of one subflow (loopback
// offers one path) whose addresses are the stream's, and whose kernel
// counts hold what the stream moved.
func TestMPTCPLoopback(t *testing.T) {
	needMPTCP(t)
	port := loopserver.Start(t, func(c *server.Config) { c.HandshakeTimeout = 2 * time.Second; c.MPTCP = true }).Addr().Port
	for _, tc := range []struct {
		name string
		set  func(*spec.Spec)
	}{
		{"-P 2", func(s *spec.Spec) { s.Streams = 2 }},
		{"-R", func(s *spec.Spec) { s.Reverse = true }},
		{"--bidir", func(s *spec.Spec) { s.Bidir = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec.Default()
			s.Duration, s.Interval, s.MPTCP = 300*time.Millisecond, 0, true
			tc.set(&s)
			res, err := runClient(t, port, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			dirs := res.Directions()
			if want := 1 + map[bool]int{true: 1}[s.Bidir]; len(dirs) != want {
				t.Fatalf("%d directions, want %d", len(dirs), want)
			}
			for _, d := range dirs {
				if len(d.Flows) != s.Streams {
					t.Errorf("%s: %d flows, want %d", d.SenderRole, len(d.Flows), s.Streams)
				}
				for _, f := range d.Flows {
					if f.Sent == nil || f.Received == nil {
						t.Fatalf("flow %d without both ends' reports", f.ID)
					}
					checkOneSubflow(t, f.Sent, f.Sent.Bytes, true)
					checkOneSubflow(t, f.Received, f.Received.Bytes, false)
					if f.Sent.Bytes != f.Received.Bytes {
						t.Errorf("flow %d: sent %d, received %d", f.ID, f.Sent.Bytes, f.Received.Bytes)
					}
				}
			}
		})
	}
}

func checkOneSubflow(t *testing.T, st *result.Stream, moved int64, sender bool) {
	t.Helper()
	m := st.MPTCP
	if m == nil || m.Fallback || m.SubflowCount != 1 || len(m.Subflows) != 1 {
		t.Fatalf("stream %d (sender %v): MPTCP %+v; want one subflow", st.ID, sender, m)
	}
	sf := m.Subflows[0]
	if sf.Local != st.LocalAddr || sf.Remote != st.RemoteAddr {
		t.Errorf("stream %d: subflow %s -> %s, stream %s -> %s", st.ID, sf.Local, sf.Remote, st.LocalAddr, st.RemoteAddr)
	}
	// The subflow carried the stream's bytes and its hello: at least the
	// test's bytes, and not a megabyte more.
	got := int64(sf.Info.BytesReceived)
	if sender {
		got = int64(sf.Info.BytesSent - sf.Info.BytesRetrans)
	}
	if sender && m.SubflowsEarly {
		// The peer closed the connection before the sender's last
		// reading, which came before it drained (rare, under load): the
		// report says its subflows may fall short, and the connection's
		// own count (Linux 6.9 on) still covers the stream.
		t.Logf("stream %d: subflows read before the sender drained: %d of the stream's %d bytes; the connection's count %d", st.ID, got, moved, m.BytesSent)
		if m.BytesSent != 0 && int64(m.BytesSent-m.BytesRetrans) < moved {
			t.Errorf("stream %d: the connection sent %d bytes (%d again), fewer than the stream's %d", st.ID, m.BytesSent, m.BytesRetrans, moved)
		}
		return
	}
	if got < moved || got > moved+1<<20 {
		t.Errorf("stream %d (sender %v): subflow moved %d bytes, the stream %d", st.ID, sender, got, moved)
	}
}

// A client's -m against a server whose listener is plain TCP: the
// connections fall back to TCP, and both ends' reports say so rather
// than claim MPTCP.
func TestMPTCPFallbackToTCP(t *testing.T) {
	needMPTCP(t)
	// Listeners without MPTCP, dialers as asked: the server's socket is
	// TCP's, the client's MPTCP's.
	t.Setenv("GODEBUG", "multipathtcp=3")
	port := loopserver.Start(t, func(c *server.Config) { c.HandshakeTimeout = 2 * time.Second }).Addr().Port
	s := spec.Default()
	s.Duration, s.Interval, s.MPTCP = 200*time.Millisecond, 0, true
	res, err := runClient(t, port, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*result.End{&res.Local, &res.Remote} {
		for _, st := range e.Streams {
			if st.MPTCP == nil || !st.MPTCP.Fallback || len(st.MPTCP.Subflows) != 0 {
				t.Errorf("%s stream %d: MPTCP %+v; want a fallback to TCP", e.Role, st.ID, st.MPTCP)
			}
		}
	}
}

// Without -m nothing changes: no stream reports MPTCP, although the
// server's listener accepts it.
func TestNoMPTCPWithoutFlag(t *testing.T) {
	needMPTCP(t)
	port := startServer(t)
	s := spec.Default()
	s.Duration, s.Interval = 200*time.Millisecond, 0
	res, err := runClient(t, port, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*result.End{&res.Local, &res.Remote} {
		for _, st := range e.Streams {
			if st.MPTCP != nil {
				t.Errorf("%s stream %d without -m: MPTCP %+v", e.Role, st.ID, st.MPTCP)
			}
		}
	}
}
