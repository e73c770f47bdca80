//go:build !unix && !windows

package hostmon

import "fmt"

// ProcessCPU needs getrusage or GetProcessTimes, which this OS lacks.
func ProcessCPU() (CPUTimes, error) {
	return CPUTimes{}, fmt.Errorf("process CPU time: %w", ErrUnsupported)
}
