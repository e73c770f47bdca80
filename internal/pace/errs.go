package pace

import (
	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/wireperf/wireperf/internal/result"
)

// sendErrs is the distribution of how far sends were from their
// schedule, in ns: two significant digits (under 1 %) up to 10 s in a
// histogram, larger errors counted as 10 s, the exact maximum beside.
type sendErrs struct {
	h   *hdrhistogram.Histogram
	max int64
}

func newSendErrs() sendErrs { return sendErrs{h: hdrhistogram.New(1, 10e9, 2)} }

func (e *sendErrs) record(v int64) {
	e.max = max(e.max, v)
	_ = e.h.RecordValue(min(v, e.h.HighestTrackableValue()))
}

func (e *sendErrs) reset() { e.h.Reset(); e.max = 0 }

// fill writes the p50, p99 and maximum into s.
func (e *sendErrs) fill(s *result.Spacing) {
	s.ErrP50Ns = float64(min(e.h.ValueAtPercentile(50), e.max))
	s.ErrP99Ns = float64(min(e.h.ValueAtPercentile(99), e.max))
	s.ErrMaxNs = float64(e.max)
}
