package schedule

import "time"

// PairFigures are the last figures of one test from Src to Dst in one
// direction: what the daemon's grid page shows in a cell and what its
// /metrics exports for the pair. A value not measured is NaN (goodput,
// loss) or zero (RTT, times).
type PairFigures struct {
	Src, Dst, Test string
	// Direction is Forward when empty.
	Direction Direction
	// At is when the run ran (or was due, for a missed one).
	At          time.Time
	GoodputBps  float64
	LostPercent float64
	// RTTp50 and RTTp99 are a request-response test's percentiles of
	// its transactions' round trips, a ping test's of its echoes', a
	// tcp-connect test's of its handshakes'; zero for other tests.
	RTTp50 time.Duration
	RTTp99 time.Duration
	// RTTMean is a TCP test's mean of the kernel's smoothed RTT, which
	// is no percentile, or the mean of the round trips above; zero for
	// other tests.
	RTTMean time.Duration
	// LastSuccess is when the pair's last run finished successfully.
	LastSuccess time.Time
}
