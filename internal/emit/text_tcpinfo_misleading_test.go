package emit

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/units"
)

// A loopback stream's RTTs give no Buffer Delay ratio, and slow start
// that ended at the same time in every stream reads as one time.
func TestTCPInternalsLinesDoNotMislead(t *testing.T) {
	df := &figures.DirectionFigures{Streams: 2}
	df.BaselineRTTus, df.MeanRTTus = 1, 277
	line := strings.Join(rfc6349Parts(df, units.AdaptiveBits), ", ")
	if strings.Contains(line, "%") && strings.Contains(line, "Buffer Delay 2") || !strings.Contains(line, "Buffer Delay not given") {
		t.Errorf("RFC 6349 line %q; want no Buffer Delay ratio over a 1 µs baseline", line)
	}
	df.SlowStartFirst, df.SlowStartLast = 0.1, 0.1
	if got := slowStartLine(df); got != "Slow start ended at 0.10 s in every stream" {
		t.Errorf("slowStartLine = %q", got)
	}
	df.SlowStartLast = 0.3
	if got := slowStartLine(df); got != "Slow start ended at 0.10-0.30 s across the streams" {
		t.Errorf("slowStartLine = %q", got)
	}
}
