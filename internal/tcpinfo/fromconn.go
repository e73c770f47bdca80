package tcpinfo

import "syscall"

// FromConn is a convenience for a *net.TCPConn or any syscall.Conn.
func FromConn(conn syscall.Conn) (*Info, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	return Get(rc)
}
