package tcpflow

import "golang.org/x/sys/unix"

// Unacked is what the stream's socket holds that the peer has not yet
// acknowledged (SIOCOUTQ): written, but not yet delivered.
func (s *Stream) Unacked() (int, error) {
	raw, err := s.SyscallConn() // the stream may own the socket now
	if err != nil {
		return 0, err
	}
	var n int
	var ioErr error
	if err := raw.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil {
		return 0, err
	}
	return n, ioErr
}
