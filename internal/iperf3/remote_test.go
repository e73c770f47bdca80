package iperf3

import (
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// TestRemoteEndUDPReceiver: an iperf3 receiver's results become the
// receiver's figures, jitter included with the pairs it is made of.
func TestRemoteEndUDPReceiver(t *testing.T) {
	r := Results{Streams: []StreamResults{{ID: 1, Bytes: 1400 * 95, Jitter: 0.000017, Errors: 5, Packets: 100, OmittedPackets: 0}}}
	local := []result.Stream{{ID: 1, Sender: true}}
	e := remoteEnd(result.RoleServer, result.Host{}, r, spec.Spec{Protocol: spec.UDP}, local)
	if len(e.Streams) != 1 || e.Streams[0].UDP == nil {
		t.Fatalf("streams %+v", e.Streams)
	}
	u := *e.Streams[0].UDP
	want := result.UDP{Received: 95, Lost: 5, Expected: 100, JitterMs: 0.017, JitterSamples: 94,
		JitterMethod: "iperf3's user-space clock", TimestampSource: "user-space"}
	if u.JitterMs < 0.017-1e-12 || u.JitterMs > 0.017+1e-12 {
		t.Errorf("jitter %v ms; want 0.017", u.JitterMs)
	}
	u.JitterMs = want.JitterMs
	if u != want {
		t.Errorf("receiver figures %+v; want %+v", u, want)
	}
}
