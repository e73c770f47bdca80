package pace

import (
	"math"
	"time"
)

// Config is a send schedule: every Interval, release Burst datagrams.
type Config struct {
	Interval time.Duration // between slots; 0 or less: no pacing
	Burst    int           // datagrams per slot; below 1 means 1
	// Spacing holds each gap (UDPmon's spacing: Pacer); otherwise the
	// schedule is an average rate that a late sender catches up (Rate).
	Spacing bool
	// Spin busy-waits the last part of every wait of a Pacer on the
	// monotonic clock instead of sleeping it: the gaps are exact to a
	// microsecond, at the cost of a core. Off, every wait sleeps.
	Spin bool
	// SpinThreshold is the last part of every wait spent spinning, with
	// Spin; 0 means DefaultSpinThreshold. The pacer sleeps only for the
	// part of a wait that lies beyond this plus the sleep overshoot it has
	// measured (see Pacer).
	SpinThreshold time.Duration
}

// DefaultSpinThreshold is Linux's default timer slack: a sleeping thread
// wakes up to this much late even when the runtime's timers are exact.
const DefaultSpinThreshold = 50 * time.Microsecond

// ForRate holds a payload rate in bits per second: a slot of burst
// datagrams of payloadBytes every burst*payloadBytes*8/rate seconds,
// rounded to the nearest ns (at 10 Gbit/s of 1448-byte datagrams, 1158 ns
// for 1158.4: 0.03 % fast). A rate of 0 or less means no pacing.
func ForRate(bitsPerSec float64, payloadBytes int, burst int) Config {
	burst = max(burst, 1)
	if !(bitsPerSec > 0) || payloadBytes <= 0 {
		return Config{Burst: burst}
	}
	return Config{Interval: roundNs(float64(burst) * float64(payloadBytes) * 8 / bitsPerSec * 1e9), Burst: burst}
}

// ForPPS holds pps datagrams per second, burst at a time.
func ForPPS(pps int64, burst int) Config {
	burst = max(burst, 1)
	if pps <= 0 {
		return Config{Burst: burst}
	}
	return Config{Interval: roundNs(float64(burst) * 1e9 / float64(pps)), Burst: burst}
}

// ForSpacing sends one datagram every gap (UDPmon's inter-packet spacing).
func ForSpacing(gap time.Duration) Config {
	return Config{Interval: max(gap, 0), Burst: 1, Spacing: true}
}

// roundNs rounds to a Duration, at least 1 ns (a positive rate paces),
// and at most the largest Duration.
func roundNs(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(time.Duration(math.Round(ns)), 1)
}
