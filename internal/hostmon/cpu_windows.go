package hostmon

import (
	"fmt"
	"syscall"
	"time"
)

// ProcessCPU returns this process's CPU time so far (GetProcessTimes).
func ProcessCPU() (CPUTimes, error) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return CPUTimes{}, fmt.Errorf("GetCurrentProcess: %w", err)
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return CPUTimes{}, fmt.Errorf("GetProcessTimes: %w", err)
	}
	return CPUTimes{User: filetimeDuration(user), System: filetimeDuration(kernel), Wall: time.Now()}, nil
}

// filetimeDuration converts a FILETIME holding an amount of time (not a
// date), counted in 100 ns units.
func filetimeDuration(ft syscall.Filetime) time.Duration {
	return time.Duration(uint64(ft.HighDateTime)<<32|uint64(ft.LowDateTime)) * 100
}
