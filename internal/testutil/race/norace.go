//go:build !race

// Package race says whether the race detector is on, for tests whose
// figures (goodput, schedule lag, a router's capacity) mean nothing
// under it, or whose cost under it (SQLite's Go code filling 100,000
// rows) buys nothing. They skip there, and make test runs them in its
// pass without the detector.
package race

// Enabled is false without the race detector.
const Enabled = false
