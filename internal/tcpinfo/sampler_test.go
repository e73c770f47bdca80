package tcpinfo

import (
	"errors"
	"testing"
	"time"
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

// TestSamplerKeepThins drives the thinning rule with exact tick times:
// when the timeline is full, every other sample goes and the stride
// doubles, so kept samples stay evenly spaced at the new period.
func TestSamplerKeepThins(t *testing.T) {
	const period = time.Millisecond
	s := NewSampler(nil, SamplerConfig{Period: period, MaxSamples: 16})
	for k := 1; k <= 100; k++ {
		s.keep(Sample{At: time.Duration(k) * period}, k, false)
	}
	if len(s.samples) > 16 {
		t.Fatalf("kept %d samples, the limit is 16", len(s.samples))
	}
	if s.stride != 8 {
		t.Fatalf("stride %d after 100 ticks into 16 slots, want 8", s.stride)
	}
	step := period * time.Duration(s.stride)
	for i := 1; i < len(s.samples); i++ {
		if gap := s.samples[i].At - s.samples[i-1].At; gap != step {
			t.Fatalf("gap %v between samples %d and %d, want %v", gap, i-1, i, step)
		}
	}
	// The final sample is kept whatever the stride, replacing the last
	// one when it would land less than half a period after it.
	last := s.samples[len(s.samples)-1].At
	s.keep(Sample{At: last + step/4}, 101, true)
	if got := s.samples[len(s.samples)-1].At; got != last+step/4 {
		t.Fatalf("final sample at %v, want %v in place of the last", got, last+step/4)
	}
	n := len(s.samples)
	s.keep(Sample{At: last + step}, 102, true)
	if len(s.samples) != n+1 {
		t.Fatalf("a final sample a whole period later was not appended")
	}
}

// waitClosed waits for ch to close, at most 10 s: the event the test
// needs, not a guess at how long it takes.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("waiting for %s: nothing after 10 s", what)
	}
}
