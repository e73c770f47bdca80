package tcpinfo

import (
	"errors"
	"testing"
)

// TestSamplerNeedsPeriod: there is no package default to fall back on;
// a sampler without a period says so instead of sampling.
func TestSamplerNeedsPeriod(t *testing.T) {
	s := NewSampler(nil, SamplerConfig{})
	s.Start()
	tl := s.Stop()
	if !errors.Is(tl.Err, ErrNoPeriod) || len(tl.Samples) != 0 {
		t.Fatalf("timeline %+v; want no samples and ErrNoPeriod", tl)
	}
}

func TestErrUnsupportedIsTheStandardOne(t *testing.T) {
	if !errors.Is(ErrUnsupported, errors.ErrUnsupported) {
		t.Fatalf("%v does not wrap errors.ErrUnsupported", ErrUnsupported)
	}
}
