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

// --extra-data, --repeating-payload and --skip-rx-copy travel under
// iperf3 3.21's keys ("extra_data", "repeating_payload": 1,
// "skip_rx_copy": 1) and back; a UDP test's skip_rx_copy, which 3.21
// sends, is dropped (our UDP receivers read their headers).
func TestParamsPayloadFlags(t *testing.T) {
	s := spec.Default()
	s.ExtraData, s.RepeatingPayload, s.SkipRxCopy = `a "quoted" \ string`, true, true
	b, err := json.Marshal(ParamsFromSpec(s, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"extra_data":"a \"quoted\" \\ string"`, `"repeating_payload":1`, `"skip_rx_copy":1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("parameters %s lack %s", b, want)
		}
	}
	var back Params
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, err := back.Spec(); err != nil || got.ExtraData != s.ExtraData || !got.RepeatingPayload || !got.SkipRxCopy {
		t.Errorf("read back as %q, %v, %v (%v)", got.ExtraData, got.RepeatingPayload, got.SkipRxCopy, err)
	}
	if b, _ := json.Marshal(ParamsFromSpec(spec.Default(), false)); strings.Contains(string(b), "repeating") || strings.Contains(string(b), "skip_rx") || strings.Contains(string(b), "extra_data") {
		t.Errorf("a test without the flags sends %s", b)
	}
	udp := Params{UDP: true, Time: 1, Parallel: 1, SkipRxCopy: 1, RepeatingPayload: 1}
	if got, err := udp.Spec(); err != nil || got.SkipRxCopy || !got.RepeatingPayload {
		t.Errorf("UDP: skip-rx-copy %v, repeating %v, %v; want false, true", got.SkipRxCopy, got.RepeatingPayload, err)
	}
}
