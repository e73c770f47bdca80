//go:build !linux

package tcpinfo

import "syscall"

// Get reads TCP_INFO, which only Linux provides here; elsewhere it returns
// nil, ErrUnsupported.
func Get(c syscall.RawConn) (*Info, error) {
	return nil, ErrUnsupported
}
