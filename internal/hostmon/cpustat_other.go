//go:build !linux

package hostmon

import "fmt"

// ReadCPUStat needs Linux's /proc/stat.
func ReadCPUStat() ([]CPUStat, error) {
	return nil, fmt.Errorf("per-CPU time needs Linux /proc/stat: %w", ErrUnsupported)
}
