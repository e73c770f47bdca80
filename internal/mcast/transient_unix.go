//go:build !windows

package mcast

import (
	"errors"
	"syscall"
)

// transient reports whether a send failed for a full queue, which a later
// send may not meet.
func transient(err error) bool {
	return errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EAGAIN)
}
