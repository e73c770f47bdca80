package iperf3

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// setPacingRate caps a TCP socket's sending rate (SO_MAX_PACING_RATE,
// bytes per second): iperf3's -b for TCP. The kernel paces in TCP itself
// (or in the fq qdisc), so no timer of ours is needed.
func setPacingRate(raw syscall.RawConn, bytesPerSec uint64) error {
	var serr error
	err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, bytesPerSec)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("setting SO_MAX_PACING_RATE %d: %w", bytesPerSec, err)
	}
	return nil
}
