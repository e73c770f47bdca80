package mcast

import (
	"errors"
	"syscall"
)

// transient reports whether a send failed for a full queue, which a later
// send may not meet (WSAENOBUFS is error 10055).
func transient(err error) bool {
	return errors.Is(err, syscall.Errno(10055))
}
