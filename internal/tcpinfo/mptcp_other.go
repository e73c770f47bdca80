//go:build !linux

package tcpinfo

import "syscall"

// GetMPTCP reads MPTCP's socket options, which only Linux provides here;
// elsewhere it returns nil, ErrUnsupported.
func GetMPTCP(c syscall.RawConn) (*MPTCP, error) {
	return nil, ErrUnsupported
}
