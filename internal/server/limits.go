package server

import (
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// Limits are what a server admits. Zero means no limit.
type Limits struct {
	MaxTests          int           // tests running at once, over all clients
	MaxTestsPerClient int           // tests running at once from one client address
	MaxStreams        int           // data connections of one test
	MaxDuration       time.Duration // length of one test
}

// DefaultLimits keep one busy client from taking a shared server.
func DefaultLimits() Limits {
	return Limits{MaxTests: 16, MaxTestsPerClient: 4, MaxStreams: spec.MaxStreams, MaxDuration: 24 * time.Hour}
}

// check refuses a spec that exceeds a per-test limit, with a reason the
// client can show as is.
func (l Limits) check(s spec.Spec) error {
	if l.MaxStreams > 0 && s.DataConns() > l.MaxStreams {
		return fmt.Errorf("server refuses %d data connections: its limit is %d (--max-streams)", s.DataConns(), l.MaxStreams)
	}
	if l.MaxDuration > 0 && s.Duration > l.MaxDuration {
		return fmt.Errorf("server refuses a %v test: its limit is %v (--max-duration)", s.Duration, l.MaxDuration)
	}
	return nil
}
