//go:build unix

package main

import (
	"runtime"
	"syscall"
	"time"
)

// selfUsage is this process's CPU time (user+system) and peak RSS.
func selfUsage() (cpu time.Duration, peakRSS int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	peakRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux and the BSDs
	if runtime.GOOS == "darwin" {
		peakRSS = int64(ru.Maxrss) // bytes on macOS
	}
	return cpu, peakRSS, true
}
