//go:build !linux

package hostmon

import "fmt"

// ReadMemUsed needs Linux's /proc/meminfo.
func ReadMemUsed() (int64, error) {
	return 0, fmt.Errorf("memory in use needs Linux /proc/meminfo: %w", ErrUnsupported)
}
