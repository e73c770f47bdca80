package server

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// short is s at -i every for d.
func short(s spec.Spec, every, d time.Duration) spec.Spec {
	s.Interval, s.Duration = every, d
	return s
}

func tripTimes(s spec.Spec) spec.Spec {
	s.TripTimes = true
	return s
}

func onBytes(s spec.Spec) spec.Spec {
	s.Duration, s.Bytes = 0, 1<<30
	return s
}

func TestKeylessIntervalFloor(t *testing.T) {
	l := DefaultLimits()
	fast := short(spec.Default(), 10*time.Millisecond, 10*time.Second)
	err := l.checkFrom(fast, false)
	if err == nil || !strings.Contains(err.Error(), "server refuses -i 10ms from a client without a key: its shortest is 100ms (--min-keyless-interval)") {
		t.Fatalf("keyless -i 0.01: %v, want the floor", err)
	}
	if err := l.checkFrom(fast, true); err != nil {
		t.Fatalf("keyed -i 0.01: %v", err)
	}
	if err := l.checkFrom(short(spec.Default(), 100*time.Millisecond, 10*time.Second), false); err != nil {
		t.Fatalf("keyless -i 0.1: %v", err)
	}
	if err := l.checkFrom(short(spec.Default(), 0, 10*time.Second), false); err != nil {
		t.Fatalf("keyless -i 0 (no rows): %v", err)
	}
}

func TestLimitsCheck(t *testing.T) {
	tcp := func(streams, length int, bidir bool) spec.Spec {
		s := spec.Default()
		s.Streams, s.Length, s.Bidir = streams, length, bidir
		return s
	}
	for _, tc := range []struct {
		name   string
		limits Limits
		spec   spec.Spec
		want   string // "" admits
	}{
		{"defaults admit the most streams at the default block", DefaultLimits(), tcp(spec.MaxStreams, spec.DefaultTCPLength, false), ""},
		{"defaults admit 32 streams of the largest block", DefaultLimits(), tcp(32, spec.MaxLength, false), ""},
		{"defaults refuse 64 streams of the largest block", DefaultLimits(), tcp(64, spec.MaxLength, false), "(1024 MiB of buffers) and 0 MiB of interval rows kept; its limit is 544 MiB (--max-test-memory)"},
		{"rows kept are charged", Limits{MaxTestMemory: 16 << 20}, short(tcp(128, 1024, false), 10*time.Millisecond, 24*time.Hour), "(0 MiB of buffers) and 32 MiB of interval rows kept"},
		{"rows are charged for the test's length only", Limits{MaxTestMemory: 16 << 20}, short(tcp(128, 1024, false), 10*time.Millisecond, 2*time.Second), ""},
		{"a test on bytes is charged for the longest test", Limits{MaxTestMemory: 16 << 20, MaxDuration: time.Hour}, onBytes(short(tcp(128, 1024, false), 10*time.Millisecond, 0)), "32 MiB of interval rows kept"},
		{"defaults admit -P 128 -i 0.01 for 24 h from a keyed client", DefaultLimits(), short(tcp(128, spec.DefaultTCPLength, false), 10*time.Millisecond, 24*time.Hour), ""},
		{"bidir counts both directions' connections", Limits{MaxTestMemory: 3 << 20}, tcp(2, 1<<20, true), "4 data connections"},
		{"zero is no limit", Limits{}, tcp(spec.MaxStreams, spec.MaxLength, true), ""},
		{"without --trip-times small blocks are cheap", Limits{MaxTestMemory: 8 << 20}, tcp(128, 1024, true), ""},
		{"--trip-times' histograms are charged", Limits{MaxTestMemory: 8 << 20}, tripTimes(tcp(128, 1024, true)), "256 data connections"},
		{"streams", Limits{MaxStreams: 4}, tcp(5, 1024, false), "its limit is 4 (--max-streams)"},
		{"duration", Limits{MaxDuration: time.Second}, tcp(1, 1024, false), "(--max-duration)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.limits.check(tc.spec)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want a refusal mentioning %q", err, tc.want)
			}
		})
	}
}
