//go:build race

package lab

// raceEnabled is set under the race detector, which slows the router's
// user-space loop too much for capacity figures to mean anything.
const raceEnabled = true
