package advise

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// Figures that used to mislead: each case is a report line a test on
// loopback or a short test printed.

func TestProbeListInTheBaselinesUnit(t *testing.T) {
	loop := []Probe{{RTTus: 31}, {RTTus: 22}, {RTTus: 25}}
	if got := probeList(loop); got != "31 22 25 µs" {
		t.Errorf("probeList(loopback) = %q; want 31 22 25 µs, not 0.0 0.0 0.0 ms", got)
	}
	wan := []Probe{{RTTus: 215300}, {RTTus: 216000}}
	if got := probeList(wan); got != "215.3 216.0 ms" {
		t.Errorf("probeList(WAN) = %q", got)
	}
}

func TestRecommendNoDefaultsAndAValidOmit(t *testing.T) {
	client := linuxHost(result.RoleClient, "10.0.1.1", 64<<20, 64<<20)
	server := linuxHost(result.RoleServer, "10.0.2.2", 64<<20, 64<<20)
	// CPU-bound: wireperf already writes 1 MiB blocks, so -l 1M changes nothing.
	cpu := Evidence{Sender: client, Receiver: server, BaselineRTT: 100 * time.Microsecond, Bottleneck: 10e9, BottleneckGiven: true,
		Single: func() Measurement { m := measured(3e9, 5); m.SenderCPU = 99; return m }()}
	v := Classify(cpu)
	if v.Limit != LimitCPU {
		t.Fatalf("limit %s; want %s", v.Limit, LimitCPU)
	}
	for _, s := range Recommend(cpu, v).Steps {
		if strings.Contains(s, "-l ") {
			t.Errorf("advice %q suggests -l, whose default is already 1 MiB", s)
		}
	}
	// A 3 s test whose slow start ended at 2.8 s: -O 3 adds 3 s before
	// the measured time, which goes with -t 3.
	short := Evidence{Sender: client, Receiver: server, BaselineRTT: 215 * time.Millisecond, MTU: 1500, Bottleneck: 1e9, BottleneckGiven: true,
		Single: measured(263e6, 3, shares(0.15, 0), window(20e6, false), slowStart(2.8, true))}
	v = Classify(short)
	if v.Limit != LimitSlowStart {
		t.Fatalf("limit %s; want %s", v.Limit, LimitSlowStart)
	}
	steps := strings.Join(Recommend(short, v).Steps, "\n")
	if !strings.Contains(steps, "-O 3 (3 s more, not counted in the totals)") {
		t.Errorf("steps lack -O 3 as extra time:\n%s", steps)
	}
}
