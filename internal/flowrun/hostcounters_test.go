package flowrun

import (
	"reflect"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

func TestThinHostSamples(t *testing.T) {
	in := []result.HostSample{
		{T: 1, User: 10, System: 20, SoftIRQ: 0, MemUsedBytes: 5},
		{T: 4, User: 50, System: 20, SoftIRQ: 8, MemUsedBytes: 3}, // 3 s against 1 s
		{T: 5, User: 0, System: 0, SoftIRQ: 0, MemUsedBytes: 1},
		{T: 6, User: 100, System: 0, SoftIRQ: 0, MemUsedBytes: 9},
		{T: 8, User: 7, System: 7, SoftIRQ: 7, MemUsedBytes: 2}, // odd: kept
	}
	want := []result.HostSample{
		{T: 4, User: 40, System: 20, SoftIRQ: 6, MemUsedBytes: 5},
		{T: 6, User: 50, System: 0, SoftIRQ: 0, MemUsedBytes: 9},
		{T: 8, User: 7, System: 7, SoftIRQ: 7, MemUsedBytes: 2},
	}
	if got := thinHostSamples(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("thinned\n%+v\nwant\n%+v", got, want)
	}
}

// A long test's series stays within the bound, and covers the whole test.
func TestHostSamplesBounded(t *testing.T) {
	h := &HostCounterStart{}
	for i := 1; i <= 5*maxHostSamples; i++ {
		h.samples = append(h.samples, result.HostSample{T: float64(i), User: 1})
		if len(h.samples) > maxHostSamples {
			h.samples = thinHostSamples(h.samples)
		}
	}
	n := len(h.samples)
	if n > maxHostSamples || n < maxHostSamples/2 || h.samples[n-1].T != float64(5*maxHostSamples) {
		t.Fatalf("%d samples, the last at %v s", n, h.samples[n-1].T)
	}
	for i, s := range h.samples {
		if s.User != 1 {
			t.Fatalf("sample %d: %+v: the weights do not add up", i, s)
		}
	}
}
