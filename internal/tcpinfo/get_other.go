//go:build !linux

package tcpinfo

import "syscall"

// Get reads TCP_INFO, which only Linux provides here; elsewhere it returns
// nil, ErrUnsupported.
func Get(c syscall.RawConn) (*Info, error) {
	return nil, ErrUnsupported
}

// Queued reads a socket's unread receive queue, which only Linux reports
// here; elsewhere it returns 0, ErrUnsupported.
func Queued(c syscall.RawConn) (int, error) {
	return 0, ErrUnsupported
}

// ReceiveMemory is Linux's SO_MEMINFO; elsewhere it is unsupported.
func ReceiveMemory(c syscall.RawConn) (int64, error) {
	return 0, ErrUnsupported
}
