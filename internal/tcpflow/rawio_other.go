//go:build !linux

package tcpflow

import (
	"errors"
	"net"
)

// rawIO is Linux-only; elsewhere a stream uses the connection itself.
type rawIO struct{ trunc bool }

func newRawIO(*net.TCPConn) (*rawIO, error) {
	return nil, errors.New("raw socket I/O is implemented for Linux only")
}

func (*rawIO) Write([]byte) (int, error) { return 0, errors.ErrUnsupported }
func (*rawIO) Read([]byte) (int, error)  { return 0, errors.ErrUnsupported }
