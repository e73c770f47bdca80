package hostmon

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestSamplerTakesALastSample(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := StartSampler(time.Hour) // no tick during the test: only Stop's sample
	samples := s.Stop()
	if len(samples) != 1 {
		t.Fatalf("%d samples, want the one Stop takes", len(samples))
	}
	if runtime.GOOS == "linux" && (samples[0].MemUsed == nil || *samples[0].MemUsed <= 0) {
		t.Errorf("no memory reading on Linux: %+v", samples[0])
	}
}
