package hostmon

import (
	"sync"
	"time"
)

// Sample is this host's use over one period: the whole machine's CPU
// split (percent of its time) and the memory in use at the period's end.
// A field the host cannot read is nil.
type Sample struct {
	T       time.Duration // since the sampler started
	User    *float64
	System  *float64
	SoftIRQ *float64
	MemUsed *int64
}

// Sampler samples the host's CPU and memory every period, to keep beside
// a long test: a busy or short-of-memory receiver is a common hidden cause
// of a slow one.
type Sampler struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []Sample
}

// StartSampler starts sampling every period until Stop.
func StartSampler(period time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{})}
	start := time.Now()
	prev, _ := ReadCPUStat()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				s.take(start, &prev)
				return
			case <-tick.C:
				s.take(start, &prev)
			}
		}
	}()
	return s
}

func (s *Sampler) take(start time.Time, prev *[]CPUStat) {
	smp := Sample{T: time.Since(start)}
	if now, err := ReadCPUStat(); err == nil {
		if split := Split(*prev, now); len(split) > 0 && split[0].Name == "cpu" {
			c := split[0]
			smp.User, smp.System, smp.SoftIRQ = &c.User, &c.System, &c.SoftIRQ
		}
		*prev = now
	}
	if used, err := ReadMemUsed(); err == nil {
		smp.MemUsed = &used
	}
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
}

// Stop takes a last sample, stops, and returns every sample.
func (s *Sampler) Stop() []Sample {
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}
