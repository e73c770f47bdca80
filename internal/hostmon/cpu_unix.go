//go:build unix

package hostmon

import (
	"fmt"
	"syscall"
	"time"
)

// ProcessCPU returns this process's CPU time so far, all threads included.
func ProcessCPU() (CPUTimes, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUTimes{}, fmt.Errorf("getrusage: %w", err)
	}
	return CPUTimes{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
		Wall:   time.Now(),
	}, nil
}
