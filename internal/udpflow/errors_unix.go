//go:build unix

package udpflow

import (
	"errors"
	"syscall"
)

// isTransientRecv: an ICMP port-unreachable for an earlier send surfaces
// on a connected socket's next read; it is not the end of the stream.
func isTransientRecv(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
