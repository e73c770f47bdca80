package hostmon

import (
	"fmt"
	"os"
)

// ReadCPUStat reads the per-CPU time counters from /proc/stat.
func ReadCPUStat() ([]CPUStat, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	s, err := ParseCPUStat(data)
	if err != nil {
		return nil, fmt.Errorf("/proc/stat: %w", err)
	}
	return s, nil
}
