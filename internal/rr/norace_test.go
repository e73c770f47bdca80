//go:build !race

package rr_test

const raceEnabled = false
