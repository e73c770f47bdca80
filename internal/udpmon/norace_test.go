//go:build !race

package udpmon_test

const raceEnabled = false
