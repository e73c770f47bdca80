//go:build !linux

package ping

import "errors"

// SocketDenied is the error of a user who may not open ICMP sockets.
func SocketDenied() error {
	return errors.New("ICMP sockets are not permitted for this user: run as an administrator and with --raw")
}
