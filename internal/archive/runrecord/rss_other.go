//go:build !linux && !darwin

package runrecord

// peakRSS is not read on this system.
func peakRSS() (int64, bool) { return 0, false }
