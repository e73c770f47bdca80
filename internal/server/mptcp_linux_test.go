package server

import (
	"os"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
)

// iperf3's own client with -m (3.19 on) gets MPTCP data connections from
// our server, each direction: the server's record of every stream is an
// MPTCP connection of one subflow (loopback is one path).
func TestIperf3MPTCPClient(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled in this kernel (net.mptcp.enabled)")
	}
	bin := iperf3bin.Need(t)
	if !iperf3bin.MPTCP(bin) {
		t.Skipf("%s has no -m (MPTCP came with iperf3 3.19; set %s to such a build)", bin, iperf3bin.Env)
	}
	ts := startServer(t, func(c *Config) { c.MPTCP = true })
	runs := [][]string{{"-m", "-t", "1", "-P", "2"}, {"-m", "-t", "1", "-R"}}
	for _, args := range runs {
		if sent, received := iperf3Client(t, bin, ts, args...); sent == 0 || received == 0 {
			t.Fatalf("iperf3 %v: sent %d, received %d", args, sent, received)
		}
	}
	waitFor(t, func() bool { return ts.Stats().TestsFinished >= int64(len(runs)) })
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.results) != len(runs) {
		t.Fatalf("%d results, want %d", len(ts.results), len(runs))
	}
	for i, r := range ts.results {
		if !r.Spec.MPTCP {
			t.Errorf("test %d: the server's spec lost iperf3's \"mptcp\" parameter", i)
		}
		var ends []*result.End
		for _, e := range []*result.End{&r.Local, &r.Remote} {
			if e.Role == result.RoleServer {
				ends = append(ends, e)
			}
		}
		for _, e := range ends {
			if len(e.Streams) == 0 {
				t.Errorf("test %d: no server streams", i)
			}
			for _, st := range e.Streams {
				if m := st.MPTCP; m == nil || m.Fallback || m.SubflowCount != 1 || len(m.Subflows) != 1 || m.Subflows[0].Local != st.LocalAddr {
					t.Errorf("test %d, stream %d: MPTCP %+v; want one subflow at %s", i, st.ID, st.MPTCP, st.LocalAddr)
				}
			}
		}
	}
}
