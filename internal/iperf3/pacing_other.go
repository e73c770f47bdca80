//go:build !linux

package iperf3

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// setPacingRate: only Linux has SO_MAX_PACING_RATE.
func setPacingRate(raw syscall.RawConn, bytesPerSec uint64) error {
	return fmt.Errorf("TCP pacing (-b with TCP) is not available on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
