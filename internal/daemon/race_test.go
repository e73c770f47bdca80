//go:build race

package daemon_test

// raceEnabled is set under the race detector, which slows the daemons and
// their tests too much for the mesh lab's schedule lag to mean anything;
// the lab test runs in the run without it (make test).
const raceEnabled = true
