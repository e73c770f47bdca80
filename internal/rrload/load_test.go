package rrload

import (
	"testing"

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
