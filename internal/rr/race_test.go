//go:build race

package rr_test

// raceEnabled: the race detector slows every goroutine several times
// over, which the timing-sensitive lab tests cannot absorb.
const raceEnabled = true
