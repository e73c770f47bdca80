//go:build !linux && !darwin

package hostmon

// PeakRSS is not read on this system.
func PeakRSS() (int64, bool) { return 0, false }
