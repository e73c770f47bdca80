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
	// MaxTestMemory bounds one test's data buffers on this server: a
	// block of -l bytes per data connection (-P 128 -l 16M would be 2 GiB).
	MaxTestMemory int64
}

// DefaultMaxTestMemory admits every stream count at the default 1 MiB
// block, and 32 streams of the largest.
const DefaultMaxTestMemory = 512 << 20

// DefaultLimits keep one busy client from taking a shared server.
func DefaultLimits() Limits {
	return Limits{MaxTests: 16, MaxTestsPerClient: 4, MaxStreams: spec.MaxStreams, MaxDuration: 24 * time.Hour,
		MaxTestMemory: DefaultMaxTestMemory}
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
	if mem := int64(s.DataConns()) * int64(s.Length); l.MaxTestMemory > 0 && mem > l.MaxTestMemory {
		return fmt.Errorf("server refuses %d data connections of %d-byte blocks (%d MiB of buffers): its limit is %d MiB (--max-test-memory); use a smaller -l or fewer streams",
			s.DataConns(), s.Length, mem>>20, l.MaxTestMemory>>20)
	}
	return nil
}
