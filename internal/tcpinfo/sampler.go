package tcpinfo

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// DefaultMaxSamples bounds the samples a Sampler keeps: 6.8 minutes at
// 100 ms. Past it the timeline is thinned (see SamplerConfig.MaxSamples).
const DefaultMaxSamples = 4096

// Sample is one reading of a socket's TCP_INFO, and of BBR's own state
// when the socket's congestion control is bbr.
type Sample struct {
	At   time.Duration // since the sampler's epoch
	Info Info
	BBR  *BBR // nil unless the algorithm is bbr
}

// SamplerConfig says when and how much to sample.
type SamplerConfig struct {
	// Period between samples, which must be positive (the product's
	// default is spec.DefaultTCPInfoInterval). Samples fall on the
	// multiples of Period after Epoch, so that several sockets' timelines
	// line up.
	Period time.Duration
	// Epoch is time zero of the timeline (the test's start).
	Epoch time.Time
	// Until, when closed, ends the periodic sampling with one last sample:
	// the sending loop has finished, and the counters that matter stop
	// moving. Nil means sample until Stop.
	Until <-chan struct{}
	// MaxSamples bounds the samples kept; 0 means DefaultMaxSamples. When
	// the timeline is full every other sample is dropped and the sampler
	// keeps one sample in two from then on, so a long test keeps an even
	// timeline at a coarser period (Timeline.Period says which).
	MaxSamples int
	// OnSample, when set, sees every sample as it is taken, thinned or
	// not, on the sampler's goroutine. Figures that need every sample
	// (when slow start ended, the mean RTT) are computed here.
	OnSample func(*Sample)
}

// Sampler reads TCP_INFO from one socket every period, on a goroutine of
// its own, and keeps the readings as a timeline. One read costs about a
// microsecond (BenchmarkGet), so sampling even every 10 ms costs no
// measurable throughput (BenchmarkSamplingGoodput).
type Sampler struct {
	rc  syscall.RawConn
	cfg SamplerConfig

	stop    chan struct{}
	done    chan struct{}
	started bool
	once    sync.Once

	// Owned by the sampling goroutine until done is closed.
	samples []Sample
	stride  int  // keep one tick in stride
	bbr     bool // still worth asking for BBR's state
	err     error
}

// Timeline is what a Sampler kept.
type Timeline struct {
	Samples []Sample
	// Period between kept samples: the configured period times the
	// thinning factor.
	Period time.Duration
	// Err is why sampling stopped early or never began (ErrUnsupported
	// on systems without TCP_INFO), or nil.
	Err error
}

// NewSampler prepares a sampler of the socket behind rc; Start starts it.
func NewSampler(rc syscall.RawConn, cfg SamplerConfig) *Sampler {
	if cfg.MaxSamples <= 0 {
		cfg.MaxSamples = DefaultMaxSamples
	}
	cfg.MaxSamples = max(cfg.MaxSamples, 4)
	if cfg.Epoch.IsZero() {
		cfg.Epoch = time.Now()
	}
	return &Sampler{rc: rc, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{}), stride: 1, bbr: true}
}

// ErrNoPeriod is why a Sampler without a positive period never samples.
var ErrNoPeriod = errors.New("tcpinfo: the sampling period must be positive")

// Start begins sampling. Call it at most once.
func (s *Sampler) Start() {
	if s.cfg.Period <= 0 {
		s.err = ErrNoPeriod
		return
	}
	s.started = true
	go s.loop()
}

// Stop ends sampling, waits for the sampling goroutine and returns the
// timeline. It may be called more than once and without Start.
func (s *Sampler) Stop() Timeline {
	s.once.Do(func() { close(s.stop) })
	if s.started {
		<-s.done
	}
	return Timeline{Samples: s.samples, Period: s.cfg.Period * time.Duration(s.stride), Err: s.err}
}

func (s *Sampler) loop() {
	defer close(s.done)
	until := s.cfg.Until
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := 1; ; k++ {
		due := s.cfg.Epoch.Add(time.Duration(k) * s.cfg.Period)
		wait := time.Until(due)
		if wait < 0 {
			// Woken late (a loaded machine): skip the ticks already
			// past rather than firing a burst of samples.
			k += int(-wait / s.cfg.Period)
			due = s.cfg.Epoch.Add(time.Duration(k) * s.cfg.Period)
			wait = time.Until(due)
		}
		timer.Reset(wait)
		select {
		case <-s.stop:
			return
		case <-until:
			s.take(k, true)
			return
		case <-timer.C:
			if !s.take(k, false) {
				return
			}
		}
	}
}

// take reads the sample of tick k and reports whether sampling should go
// on. final marks the last sample, which is kept whatever the thinning.
func (s *Sampler) take(k int, final bool) bool {
	info, err := Get(s.rc)
	if err != nil {
		// A closed socket or a system without TCP_INFO: nothing more
		// will come.
		if s.err == nil {
			s.err = err
		}
		return false
	}
	smp := Sample{At: time.Since(s.cfg.Epoch), Info: *info}
	if s.bbr {
		bbr, err := GetBBR(s.rc)
		switch {
		case err == nil:
			smp.BBR = bbr
		case errors.Is(err, ErrNotBBR), errors.Is(err, ErrUnsupported):
			s.bbr = false
		}
	}
	if s.cfg.OnSample != nil {
		s.cfg.OnSample(&smp)
	}
	s.keep(smp, k, final)
	return true
}

// keep appends the sample of tick k unless thinning skips it, and halves
// the timeline when it is full.
func (s *Sampler) keep(smp Sample, k int, final bool) {
	if final {
		// The last sample always counts, but it must not land just after
		// the previous one, or the timeline's spacing would lie.
		if n := len(s.samples); n > 0 && smp.At-s.samples[n-1].At < s.cfg.Period*time.Duration(s.stride)/2 {
			s.samples[n-1] = smp
			return
		}
	} else if k%s.stride != 0 {
		return
	}
	if len(s.samples) >= s.cfg.MaxSamples {
		kept := s.samples[:0]
		for i := 1; i < len(s.samples); i += 2 {
			kept = append(kept, s.samples[i])
		}
		clear(s.samples[len(kept):])
		s.samples = kept
		s.stride *= 2
		if !final && k%s.stride != 0 {
			return // off the new stride: keeping it would break the spacing
		}
	}
	s.samples = append(s.samples, smp)
}

// Unavailable says what a system without TCP_INFO leaves out of a
// report, or "" where TCP_INFO is read (Linux).
func Unavailable() string {
	if runtime.GOOS == "linux" {
		return ""
	}
	return fmt.Sprintf("TCP_INFO is not read on %s: no RTT, congestion window, retransmits, "+
		"pacing and delivery rates, windows or limited-time figures", runtime.GOOS)
}
