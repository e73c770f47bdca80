//go:build !linux

package hostmon

import "fmt"

// ReadLimits needs Linux's /proc/sys/net.
func ReadLimits() (Limits, error) {
	return Limits{}, fmt.Errorf("socket buffer limits need Linux /proc/sys/net: %w", ErrUnsupported)
}
