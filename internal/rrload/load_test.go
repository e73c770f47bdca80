package rrload

import (
	"reflect"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

func TestUDPLostPercentAddsTheReceivers(t *testing.T) {
	recv := func(lost, expected int64) *result.Stream {
		return &result.Stream{UDP: &result.UDP{Lost: lost, Expected: expected}}
	}
	d := result.Direction{Flows: []result.Flow{{Received: recv(3, 100)}, {Received: recv(1, 300)}}}
	if p := udpLostPercent(d); p == nil || *p != 1 {
		t.Fatalf("4 of 400 lost: got %v, want 1%%", p)
	}
	tcp := result.Direction{Flows: []result.Flow{{Received: &result.Stream{}}}}
	if p := udpLostPercent(tcp); p != nil {
		t.Fatalf("a TCP direction: got %v%%, want nil", *p)
	}
}

// TestPhasesRun: a phase that ran under nine tenths of its plan is
// incomplete; the loaded phase's plan is the load's -t plus its -O.
func TestPhasesRun(t *testing.T) {
	cfg := Config{Idle: 3 * time.Second, After: 3 * time.Second}
	cfg.Load.Duration, cfg.Load.Omit = 8*time.Second, time.Second
	got := phasesRun(cfg, []result.RRPoint{
		{Label: PhaseIdle, Seconds: 3.22}, {Label: PhaseLoaded, Seconds: 4.5}, {Label: PhaseAfter, Seconds: 0},
	})
	want := []result.RRPhase{
		{Label: PhaseIdle, PlannedSeconds: 3, Seconds: 3.22},
		{Label: PhaseLoaded, PlannedSeconds: 9, Seconds: 4.5, Incomplete: true},
		{Label: PhaseAfter, PlannedSeconds: 3, Seconds: 0, Incomplete: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if ph := phasesRun(cfg, []result.RRPoint{{Label: PhaseLoaded, Seconds: 8.2}}); ph[1].Incomplete {
		t.Errorf("8.2 s of 9 is complete: %+v", ph[1])
	}
}
