package udpflow

import (
	"errors"
	"syscall"
)

// isTransientRecv: Windows reports an ICMP port-unreachable for an earlier
// send as a reset on the next read.
func isTransientRecv(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}
