//go:build race

package daemon_test

// raceEnabled: the race detector slows the daemon some tenfold.
const raceEnabled = true
