package figures

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

func u64(n uint64) *uint64 { return &n }

// TestAttributeUDPLossAt: each place's count is printed as counted, and
// the remainder as unexplained; host-wide RcvbufErrors never crowd out
// the router's share (the new user's run: 25,754 lost put down to the
// socket buffer while the router counted 28,053 queue drops).
func TestAttributeUDPLossAt(t *testing.T) {
	tests := []struct {
		name        string
		lost        int64
		recv, send  *result.SNMP
		gso         int
		c           LossCounts
		wantNetwork int64
		wantApprox  bool
		want        []string
	}{
		{
			name: "router and socket explain all",
			lost: 9163, recv: &result.SNMP{RcvbufErrors: 5632, InErrors: 5632}, send: &result.SNMP{},
			c:    LossCounts{ReceiverSocket: u64(473), Router: u64(8690)},
			want: []string{"of 9,163 lost datagrams, the lab's router dropped 8,690 and the receiving socket dropped 473: every lost datagram is counted"},
		},
		{
			name: "a remainder is unexplained, not assigned",
			lost: 1000, recv: &result.SNMP{RcvbufErrors: 900, InErrors: 900},
			send:        &result.SNMP{},
			c:           LossCounts{ReceiverSocket: u64(100), Router: u64(700)},
			wantNetwork: 200,
			want:        []string{"router dropped 700", "socket dropped 100", "200 are unexplained"},
		},
		{
			name: "GRO batches are said to be batches",
			lost: 14785, gso: 44, recv: &result.SNMP{RcvbufErrors: 142, InErrors: 142}, send: &result.SNMP{},
			c:           LossCounts{ReceiverSocket: u64(142), SocketBatches: true, Router: u64(14202)},
			wantNetwork: 441, wantApprox: true,
			want: []string{"142 (counted per GRO batch: 142 to 6,248 datagrams", "441 are not counted one by one"},
		},
		{
			name: "counts above the loss are said to be",
			lost: 10, send: &result.SNMP{},
			c:           LossCounts{ReceiverSocket: u64(0), Router: u64(13)},
			wantNetwork: -3,
			want:        []string{"add to 3 more than were lost", "control packets"},
		},
		{
			name: "the sending host's drops beside the socket's",
			lost: 50, send: &result.SNMP{SndbufErrors: 20},
			c:    LossCounts{ReceiverSocket: u64(30)},
			want: []string{"socket dropped 30", "the sending host dropped 20"},
		},
		{
			name: "router only: the host-wide split for the rest, approximate",
			lost: 100, recv: &result.SNMP{RcvbufErrors: 30, InErrors: 30}, send: &result.SNMP{},
			c:           LossCounts{Router: u64(60)},
			wantNetwork: 10, wantApprox: true,
			want: []string{"router dropped 60", "host-wide RcvbufErrors) explain 30", "10 are unexplained"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := AttributeUDPLossAt(tc.lost, 0, tc.recv, tc.send, 0, tc.gso, tc.c)
			if a.Network != tc.wantNetwork || a.Approximate != tc.wantApprox {
				t.Errorf("unexplained %d, approximate %v; want %d, %v", a.Network, a.Approximate, tc.wantNetwork, tc.wantApprox)
			}
			for _, w := range tc.want {
				if !strings.Contains(a.Verdict, w) {
					t.Errorf("verdict %q lacks %q", a.Verdict, w)
				}
			}
			if strings.Contains(a.Verdict, "RcvbufErrors") && tc.c.ReceiverSocket != nil {
				t.Errorf("the socket's own count is there, yet the verdict leans on RcvbufErrors: %q", a.Verdict)
			}
		})
	}
	// Without any place's count it is the host-wide split, unchanged.
	a := AttributeUDPLossAt(10, 0, &result.SNMP{RcvbufErrors: 10, InErrors: 10}, &result.SNMP{}, 0, 1, LossCounts{})
	if b := AttributeUDPLoss(10, 0, &result.SNMP{RcvbufErrors: 10, InErrors: 10}, &result.SNMP{}, 0, 1); a.Verdict != b.Verdict {
		t.Errorf("%q ≠ %q", a.Verdict, b.Verdict)
	}
}
