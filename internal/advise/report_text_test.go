package advise

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/figures"
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

// TestDescribeCongestion: a host's line names the algorithm its test's
// socket ran (-C), with the sysctl's default beside it where they differ.
func TestDescribeCongestion(t *testing.T) {
	const head = "sends, tcp_rmem unknown, tcp_wmem unknown, rmem_max unknown, wmem_max unknown"
	tests := []struct {
		def, tested, want string
	}{
		{"bbr", "cubic", head + ", cubic (tested; the host's default is bbr)"},
		{"bbr", "bbr", head + ", bbr (tested)"},
		{"bbr", "", head + ", bbr"},
		{"", "cubic", head + ", cubic (tested)"},
	}
	for _, tt := range tests {
		h := Host{Limits: &result.Limits{Congestion: tt.def}, Socket: &result.Socket{Congestion: tt.tested}}
		if got := h.describe("sends"); got != tt.want {
			t.Errorf("default %q, tested %q:\n got %q\nwant %q", tt.def, tt.tested, got, tt.want)
		}
	}
}

// TestLineRateArithmetic: the ideal is stated with the sum that gives it,
// exactly: 1448/1538 × 1 Gbit/s is 941.5 Mbit/s, not 943; a packet
// train's 1.002 Gbit/s gives 943.4, and says so.
func TestLineRateArithmetic(t *testing.T) {
	for _, tt := range []struct {
		rate float64
		mtu  int
		want string
	}{
		{1e9, 1500, "941.5 Mbit/s of TCP goodput by line-rate arithmetic (1448/1538 × 1 Gbit/s)"},
		{1.002e9, 0, "943.4 Mbit/s of TCP goodput by line-rate arithmetic (1448/1538 × 1.002 Gbit/s)"},
		{622e6, 9000, "615.8 Mbit/s of TCP goodput by line-rate arithmetic (8948/9038 × 622 Mbit/s)"},
	} {
		if got := lineRateArithmetic(tt.rate, tt.mtu, figures.LineRateGoodput(tt.rate, tt.mtu)); got != tt.want {
			t.Errorf("%g at MTU %d:\n got %q\nwant %q", tt.rate, tt.mtu, got, tt.want)
		}
	}
}

// The lab's warning ends the text report and is in the JSON.
func TestReportCarriesTheLabsWarning(t *testing.T) {
	r := &Report{Target: "10.77.2.2:5201", Warnings: []string{`the lab "wan"'s router fell behind`},
		Lab: `run through the lab "wan": this host's TCP buffers are big, 128 MiB`}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "WARNING: the lab \"wan\"'s router fell behind") {
		t.Errorf("text lacks the warning:\n%s", b.String())
	}
	if n := strings.Count(b.String(), r.Lab); n != 1 {
		t.Errorf("the lab's buffers %d times, want once:\n%s", n, b.String())
	}
	doc, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"warnings"`) {
		t.Errorf("JSON lacks the warning: %s", doc)
	}
}
