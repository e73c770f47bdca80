package iperf3

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/spec"
)

// -m travels as iperf3 3.19's "mptcp": true, and back; a UDP test never
// carries it.
func TestParamsMPTCP(t *testing.T) {
	s := spec.Default()
	s.MPTCP = true
	p := ParamsFromSpec(s, false)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"mptcp":true`) {
		t.Errorf("parameters %s lack \"mptcp\":true", b)
	}
	var back Params
	if err := json.Unmarshal([]byte(`{"tcp":true,"time":1,"parallel":1,"mptcp":true}`), &back); err != nil {
		t.Fatal(err)
	}
	if got, err := back.Spec(); err != nil || !got.MPTCP {
		t.Errorf("iperf3's \"mptcp\":true read as %v, %v", got.MPTCP, err)
	}
	if b, _ := json.Marshal(ParamsFromSpec(spec.Default(), false)); strings.Contains(string(b), "mptcp") {
		t.Errorf("a test without -m sends %s", b)
	}
	udp := Params{UDP: true, Time: 1, Parallel: 1, MPTCP: true}
	if got, err := udp.Spec(); err != nil || got.MPTCP {
		t.Errorf("UDP with \"mptcp\": MPTCP %v, %v; want it dropped", got.MPTCP, err)
	}
}
