package server

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

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
		{"defaults refuse 64 streams of the largest block", DefaultLimits(), tcp(64, spec.MaxLength, false), "1024 MiB of buffers): its limit is 512 MiB (--max-test-memory)"},
		{"bidir counts both directions' connections", Limits{MaxTestMemory: 3 << 20}, tcp(2, 1<<20, true), "4 data connections"},
		{"zero is no limit", Limits{}, tcp(spec.MaxStreams, spec.MaxLength, true), ""},
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
