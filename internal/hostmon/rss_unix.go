//go:build linux || darwin

package hostmon

import (
	"runtime"
	"syscall"
)

// PeakRSS is this process's largest resident set so far, in bytes
// (getrusage's ru_maxrss: KiB on Linux, bytes on macOS).
func PeakRSS() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || ru.Maxrss <= 0 {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss), true
	}
	return int64(ru.Maxrss) * 1024, true
}
