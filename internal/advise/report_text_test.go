package advise

import (
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// TestDescribeQdisc: a host's line names the qdisc its test met, on the
// interface that carried it, and only failing that the sysctl default,
// said to be one.
func TestDescribeQdisc(t *testing.T) {
	const head = "10.77.1.1, sends, tcp_rmem unknown, tcp_wmem unknown, rmem_max unknown, wmem_max unknown"
	tests := []struct {
		limits result.Limits
		want   string
	}{
		{result.Limits{Interface: "eth0", Qdisc: "fq", DefaultQdisc: "fq_codel"}, head + ", eth0 qdisc fq"},
		{result.Limits{Qdisc: "mq", DefaultQdisc: "fq_codel"}, head + ", qdisc mq"},
		{result.Limits{Interface: "eth0", DefaultQdisc: "pfifo_fast"}, head + ", default qdisc pfifo_fast"},
		{result.Limits{Interface: "lo"}, head},
	}
	for _, tt := range tests {
		if got := (Host{Address: "10.77.1.1", Limits: &tt.limits}).describe("sends"); got != tt.want {
			t.Errorf("%+v:\n got %q\nwant %q", tt.limits, got, tt.want)
		}
	}
}
