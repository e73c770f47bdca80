package rrload

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

func rrPoint(label string, netP50, netP99, serverP99 float64) result.RRPoint {
	return result.RRPoint{Label: label, Completed: 100,
		NetworkRTT: result.Percentiles{P50: netP50, P99: netP99}, ServerTime: result.Percentiles{P99: serverP99}}
}

// TestHostDelays: the new user's run on a 215 ms path with a 50 ms queue,
// one direction loaded: network RTT p99 546 ms and server time p99 174 ms
// under load. The path can give at most about 215 + 50 ms plus the
// router's lateness, so the hosts added the rest: the server's own
// service time says it was slow, and the network RTT above the path's
// bound is the client's scheduling inside its timestamps. Both are named,
// in the loaded phase only.
func TestHostDelays(t *testing.T) {
	points := []result.RRPoint{
		rrPoint(PhaseIdle, 215_200, 215_900, 50),
		rrPoint(PhaseLoaded, 262_000, 546_000, 174_000),
		rrPoint(PhaseAfter, 215_300, 216_100, 60),
	}
	bound := 215*time.Millisecond + 50*time.Millisecond + 12*time.Millisecond // the router's measured lateness
	got := HostDelays(points, bound)
	if len(got) != 2 {
		t.Fatalf("%d flags, want the server's and the client's in the loaded phase: %+v", len(got), got)
	}
	srv, cli := got[0], got[1]
	if srv.Phase != PhaseLoaded || srv.Host != result.RoleServer || srv.AddedUs != 174_000-50 || !strings.Contains(srv.Reason, "174.000 ms against 0.050 ms idle") {
		t.Errorf("server: %+v", srv)
	}
	if cli.Phase != PhaseLoaded || cli.Host != result.RoleClient || cli.AddedUs != 546_000-277_000 || !strings.Contains(cli.Reason, "above the 277.000 ms the path can give") {
		t.Errorf("client: %+v", cli)
	}

	// The bound unknown: only what the server's own clock shows.
	if got := HostDelays(points, 0); len(got) != 1 || got[0].Host != result.RoleServer {
		t.Errorf("without a path bound: %+v", got)
	}
	// A queue that fills under load is the network's: no flag.
	quiet := []result.RRPoint{rrPoint(PhaseIdle, 215_200, 215_900, 50), rrPoint(PhaseLoaded, 262_000, 265_000, 400)}
	if got := HostDelays(quiet, bound); len(got) != 0 {
		t.Errorf("bufferbloat within the path's bound flagged as the hosts': %+v", got)
	}
}

// TestHostDelaysFromThePointsEvidence: with no path bound (outside the
// lab), a phase whose network RTT p99 holds host-delayed transactions is
// flagged on the host its own timestamps name, idle included, once per
// host and phase.
func TestHostDelaysFromThePointsEvidence(t *testing.T) {
	without := 19_900.0
	idle := rrPoint(PhaseIdle, 19_500, 33_000, 40)
	idle.HostFlags = []result.RRHostFlag{
		{Figure: "max", Host: result.RoleClient, NetworkRTTUs: 41_800, WithoutUs: &without, Transactions: 4, ShareUs: 22_800},
		{Figure: "p99", Host: result.RoleClient, NetworkRTTUs: 33_000, WithoutUs: &without, Transactions: 4, ShareUs: 22_800},
	}
	loaded := rrPoint(PhaseLoaded, 19_600, 40_000, 45)
	loaded.HostFlags = []result.RRHostFlag{{Figure: "p99", Host: result.RoleServer, NetworkRTTUs: 40_000, Transactions: 9, ShareUs: 30_000}}
	got := HostDelays([]result.RRPoint{idle, loaded}, 0)
	if len(got) != 2 {
		t.Fatalf("%d flags, want the client's idle and the server's loaded: %+v", len(got), got)
	}
	if got[0].Phase != PhaseIdle || got[0].Host != result.RoleClient || got[0].AddedUs != 33_000-19_900 ||
		!strings.Contains(got[0].Reason, "4 transactions delayed by up to 22.800 ms; network RTT p99 33.000 ms, 19.900 ms without them") {
		t.Errorf("idle: %+v", got[0])
	}
	if got[1].Phase != PhaseLoaded || got[1].Host != result.RoleServer || got[1].AddedUs != 30_000 || !strings.Contains(got[1].Reason, "every transaction was delayed") {
		t.Errorf("loaded: %+v", got[1])
	}
	// A lab bound changes nothing where the client is already named.
	if got := HostDelays([]result.RRPoint{idle, loaded}, 25*time.Millisecond); len(got) != 3 || got[2].Host != result.RoleClient || got[2].Phase != PhaseLoaded {
		t.Errorf("with a bound: %+v", got)
	}
}
