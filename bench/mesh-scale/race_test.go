//go:build race

package main

// raceEnabled is set under the race detector, which slows 200 daemons in
// one process far past the schedule lag the simulation is held to.
const raceEnabled = true
