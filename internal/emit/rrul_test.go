package emit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

func rrulResult() *result.RRUL {
	r := &result.RRUL{Host: "b", Port: 5201, IdleSeconds: 5, LoadSeconds: 10, AfterSeconds: 2,
		UpBitsPerSecond: 30e6, DownBitsPerSecond: 34e6, CPU: result.CPU{TotalPercent: 40, UserPercent: 5, SystemPercent: 35}}
	for _, c := range []struct {
		name string
		tos  int
	}{{"BE", 0}, {"BK", 0x20}, {"CS5", 0xa0}, {"EF", 0xb8}} {
		r.Flows = append(r.Flows, result.RRULFlow{Class: c.name, TOS: c.tos, Direction: "up", BitsPerSecond: 7.5e6, Bytes: 1, Congestion: "bbr"},
			result.RRULFlow{Class: c.name, TOS: c.tos, Direction: "down", BitsPerSecond: 8.5e6, Bytes: 1, Congestion: "cubic"})
	}
	r.Probes = []result.RRULProbe{{Class: "EF", TOS: 0xb8, Phases: []result.RRPoint{
		{Label: "idle", RTT: result.Percentiles{P50: 19400}},
		{Label: "loaded", Lost: 3, RTT: result.Percentiles{P50: 64000, P99: 170000}},
		{Label: "after", RTT: result.Percentiles{P50: 19500}},
	}}}
	r.Latency = result.RRULLatency{
		Idle:     result.Percentiles{Count: 500, P50: 19400, P90: 20000, P99: 22000},
		Loaded:   result.Percentiles{Count: 1000, P50: 64000, P90: 90000, P99: 170000},
		After:    result.Percentiles{Count: 200, P50: 19500, P90: 20000, P99: 21000},
		Increase: result.Percentiles{Count: 1000, P50: 44600, P90: 70000, P99: 148000},
	}
	r.HostDelays = []result.RRHostDelay{{Phase: "loaded", Host: "client", AddedUs: 2000, Reason: "UDP EF probe: because"}}
	return r
}

// The text report gives each class's goodput both ways, the totals,
// the latency per phase with the increase, each probe class, the host
// delays and the CPU, from the result's own figures.
func TestRRULText(t *testing.T) {
	var b bytes.Buffer
	if err := (&RRULText{W: &b}).Write(rrulResult()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"RRUL to b port 5201: probes alone 5 s, then under 8 TCP flows (one each way per class: BE, BK, CS5, EF) for 10 s, then alone 2 s",
		"  CS5 (TOS 0xa0)       7.50 Mbit/s            8.50 Mbit/s",
		"  total                30.00 Mbit/s           34.00 Mbit/s",
		"  loaded                                         64.000    90.000   170.000     1000",
		"  loaded − idle                                 +44.600   +70.000  +148.000",
		"  UDP EF   (TOS 0xb8)    19.400      64.000     170.000   0/3/0",
		"WARNING: in the loaded phase the client added delay (2.000 ms at p99): UDP EF probe: because",
		"CPU: client 40.0% (user 5.0%, system 35.0%)",
		"  congestion control: up bbr, down cubic (each sender's host's default)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
	asked := rrulResult()
	asked.Congestion = "cubic"
	for i := range asked.Flows {
		asked.Flows[i].Congestion = "cubic"
	}
	if got := rrulCongestion(asked); got != "  congestion control: up cubic, down cubic (asked: -C cubic)" {
		t.Errorf("asked for cubic: %q", got)
	}
	if strings.Contains(out, "bufferbloat") {
		t.Errorf("a run with host delays is not called bufferbloat:\n%s", out)
	}
}

// The JSON document is the kind and the whole result, read back equal.
func TestRRULJSON(t *testing.T) {
	var b bytes.Buffer
	in := rrulResult()
	if err := (&RRULJSON{W: &b}).Write(in); err != nil {
		t.Fatal(err)
	}
	var doc RRULDocument
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "rrul" || doc.RRUL == nil || doc.RRUL.Latency.Increase.P99 != in.Latency.Increase.P99 || len(doc.RRUL.Flows) != 8 {
		t.Errorf("read back %+v", doc)
	}
}
