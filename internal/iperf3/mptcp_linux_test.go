package iperf3

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
)

// Our client's -m against iperf3's server, each direction and with
// --bidir. An iperf3 with -m (3.19 on) opens its data listener in MPTCP
// when the parameters ask, and every stream is an MPTCP connection of
// one subflow (loopback is one path); an older one listens in plain TCP,
// and every stream reports its fallback to TCP instead.
func TestMPTCPClientAgainstIperf3(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled in this kernel (net.mptcp.enabled)")
	}
	needIperf3(t)
	multipath := iperf3bin.MPTCP(iperf3Path)
	for _, tc := range []struct {
		name string
		set  func(*spec.Spec)
	}{
		{"-P 2", func(s *spec.Spec) { s.Streams = 2 }},
		{"-R", func(s *spec.Spec) { s.Reverse = true }},
		{"--bidir", func(s *spec.Spec) { s.Bidir = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, port := startIperf3Server(t)
			s := clientSpec(func(s *spec.Spec) { s.MPTCP = true; tc.set(s) })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
			if err != nil {
				t.Fatalf("RunClient: %v", err)
			}
			var local []result.Stream
			for _, e := range []*result.End{&res.Local, &res.Remote} {
				if e.Role == result.RoleClient {
					local = e.Streams
				}
			}
			if want := s.Streams * map[bool]int{false: 1, true: 2}[s.Bidir]; len(local) != want {
				t.Fatalf("%d client streams, want %d", len(local), want)
			}
			for _, st := range local {
				m := st.MPTCP
				switch {
				case m == nil:
					t.Errorf("stream %d: no MPTCP report", st.ID)
				case multipath && (m.Fallback || m.SubflowCount != 1 || len(m.Subflows) != 1 || m.Subflows[0].Remote != st.RemoteAddr):
					t.Errorf("stream %d against %s: %+v; want one subflow to %s", st.ID, iperf3Path, m, st.RemoteAddr)
				case !multipath && !m.Fallback:
					t.Errorf("stream %d against %s, which has no -m: %+v; want a fallback to TCP", st.ID, iperf3Path, m)
				}
				if st.Bytes == 0 {
					t.Errorf("stream %d moved nothing", st.ID)
				}
			}
		})
	}
}
