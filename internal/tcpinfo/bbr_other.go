//go:build !linux

package tcpinfo

import "syscall"

// GetBBR reads TCP_CC_INFO, which only Linux provides here; elsewhere it
// returns nil, ErrUnsupported.
func GetBBR(c syscall.RawConn) (*BBR, error) {
	return nil, ErrUnsupported
}
