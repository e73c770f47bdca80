//go:build race

package group

// raceEnabled is set under the race detector, which slows the lab's
// user-space router and both TCP stacks too much for goodput figures to
// mean anything; the lab test judges them in the run without it.
const raceEnabled = true
