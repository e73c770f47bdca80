package measure

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/pace"
)

// -b reads its suffix as iperf3 does, a power of 1000 whatever its case:
// "-b 1G" paces to exactly 10^9 bit/s, the kernel's pacing rate for TCP
// and the datagram schedule for UDP.
func TestBitrateIsDecimalAsIperf3ReadsIt(t *testing.T) {
	for _, line := range []string{"client -b 1G", "client -b 1g", "client -b 1000M", "client -b 1000000k"} {
		c := mustLine(t, line).Client
		if c.Spec.Rate != 1e9 {
			t.Errorf("%q: rate %v bit/s; want 1e9", line, c.Spec.Rate)
		}
		if got := netsetup.TCPOptions(c.Spec, true, true).MaxPacingRate; got != 125_000_000 {
			t.Errorf("%q: SO_MAX_PACING_RATE %d bytes/s; want 125000000", line, got)
		}
	}
	c := mustLine(t, "client -u -b 1G/10 -l 1000").Client
	if c.Spec.Rate != 1e9 || c.Spec.Burst != 10 {
		t.Fatalf("-u -b 1G/10: rate %v burst %d; want 1e9 and 10", c.Spec.Rate, c.Spec.Burst)
	}
	// 10 datagrams of 1000 bytes at 10^9 bit/s: one burst every 80 µs
	// (at 2^30 bit/s it would be 74.506 µs).
	if cfg := pace.ForRate(c.Spec.Rate, int(c.Spec.Length), c.Spec.Burst); cfg.Interval != 80*time.Microsecond {
		t.Errorf("-u -b 1G/10 -l 1000 paces a burst every %v; want 80µs", cfg.Interval)
	}
	if r, err := ParseBottleneck("1G"); err != nil || r != 1e9 {
		t.Errorf("--bottleneck 1G = %v, %v; want 1e9", r, err)
	}
}
