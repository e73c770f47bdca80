package meshmetrics

import (
	"context"
	"math"
	"testing"
	"time"
)

// A ping or tcp-connect pair is exported under the names every test
// shares: its RTT (echo or handshake) as wireperf_mesh_rtt_seconds with
// its statistic, its loss as wireperf_mesh_loss_ratio, and no goodput; a
// run of either kind is counted under its own kind.
func TestProbePairs(t *testing.T) {
	at := time.Unix(1_780_000_000, 0)
	s := Snapshot{Host: "ams", Hosts: []string{"ams", "router"}, Tests: []string{"echo", "https"}, Runs: map[string]int64{},
		Pairs: []Pair{
			{Src: "ams", Dst: "router", Test: "echo", At: at, LastSuccess: at, GoodputBps: math.NaN(), LostPercent: 5,
				RTTp50: 800 * time.Microsecond, RTTp99: 4915 * time.Microsecond, RTTMean: time.Millisecond},
			{Src: "ams", Dst: "router", Test: "https", At: at, LastSuccess: at, GoodputBps: math.NaN(), LostPercent: 100},
		}}
	m := New("ams", testKinds, func(context.Context) (Snapshot, error) { return s, nil }, 0)
	m.RunEnded("ping", "finished", false)
	m.RunEnded("tcp-connect", "finished", false)
	fams := scrape(t, m.Handler())
	echo := map[string]string{"src": "ams", "dst": "router", "test": "echo", "direction": "forward"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range echo {
			out[a] = b
		}
		out[k] = v
		return out
	}
	if got, ok := sample(fams, "wireperf_mesh_rtt_seconds", with("statistic", "p99")); !ok || got.GetGauge().GetValue() != 0.004915 {
		t.Errorf("echo's RTT p99: %v, want 0.004915 s", got)
	}
	if got, ok := sample(fams, "wireperf_mesh_rtt_seconds", with("statistic", "mean")); !ok || got.GetGauge().GetValue() != 0.001 {
		t.Errorf("echo's mean RTT: %v, want 0.001 s", got)
	}
	if got, ok := sample(fams, "wireperf_mesh_loss_ratio", echo); !ok || got.GetGauge().GetValue() != 0.05 {
		t.Errorf("echo's loss: %v, want 0.05", got)
	}
	if got, ok := sample(fams, "wireperf_mesh_loss_ratio", with("test", "https")); !ok || got.GetGauge().GetValue() != 1 {
		t.Errorf("https's loss (no attempt connected): %v, want 1", got)
	}
	for _, m := range fams["wireperf_mesh_rtt_seconds"].GetMetric() {
		if labels(m)["test"] == "https" {
			t.Errorf("a tcp-connect run that never connected has an RTT series: %v", m)
		}
	}
	if n := len(fams["wireperf_mesh_goodput_bytes_per_second"].GetMetric()); n != 0 {
		t.Errorf("%d goodput series for probes, want none", n)
	}
	for _, kind := range []string{"ping", "tcp-connect"} {
		if got, ok := sample(fams, "wireperf_mesh_runs_total", map[string]string{"host": "ams", "kind": kind, "outcome": "finished"}); !ok || got.GetCounter().GetValue() != 1 {
			t.Errorf("%s runs finished: %v, want 1", kind, got)
		}
	}
}
