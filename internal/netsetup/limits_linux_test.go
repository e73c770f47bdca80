package netsetup

import (
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// TestLimitsFor: a socket's local address names the interface its packets
// leave by and that interface's root qdisc (lo's here); an address no
// interface holds, or none at all, leaves them empty and the rest intact.
func TestLimitsFor(t *testing.T) {
	base := LocalLimits()
	if base == nil {
		t.Skip("no kernel limits readable here")
	}
	for _, addr := range []string{"127.0.0.1:5201", "127.0.0.1", "[::1]:5201", "[::ffff:127.0.0.1]:5201"} {
		l := LimitsFor(addr)
		if l == nil || l.Interface != "lo" || l.Qdisc == "" {
			t.Errorf("LimitsFor(%s) = %+v; want lo and its qdisc", addr, l)
			continue
		}
		if l.RmemMax != base.RmemMax || l.TCPRmem != base.TCPRmem || l.DefaultQdisc != base.DefaultQdisc {
			t.Errorf("LimitsFor(%s) = %+v; the kernel limits differ from %+v", addr, l, base)
		}
	}
	for _, addr := range []string{"", "nonsense", "203.0.113.9:5201"} {
		if l := LimitsFor(addr); l == nil || l.Interface != "" || l.Qdisc != "" || l.TCPRmem != base.TCPRmem {
			t.Errorf("LimitsFor(%q) = %+v; want the kernel limits alone", addr, l)
		}
	}
	streams := []result.Stream{{ID: 1}, {ID: 2, LocalAddr: "127.0.0.1:40000"}}
	if l := StreamLimits(streams); l == nil || l.Interface != "lo" {
		t.Errorf("StreamLimits = %+v; want the second stream's lo", l)
	}
	if l := StreamLimits(nil); l == nil || l.Interface != "" || l.TCPRmem != base.TCPRmem {
		t.Errorf("StreamLimits(nil) = %+v; want the kernel limits alone", l)
	}
}
