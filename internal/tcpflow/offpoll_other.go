//go:build !linux

package tcpflow

import (
	"errors"
	"syscall"
)

// ownedFD is Linux-only; elsewhere a stream's data loop stays on Go's
// poller.
type ownedFD struct{}

func (s *Stream) takeOver() bool  { return false }
func (s *Stream) offPoller() bool { return false }
func (s *Stream) closeWrite()     { _ = s.Conn.CloseWrite() }
func (s *Stream) loopEnded()      {}

// Close closes the stream's socket.
func (s *Stream) Close() error { return s.Conn.Close() }

// SyscallConn gives access to the stream's socket (TCP_INFO).
func (s *Stream) SyscallConn() (syscall.RawConn, error) { return s.Conn.SyscallConn() }

type blockingIO struct{ s *Stream }

func (blockingIO) Write([]byte) (int, error) { return 0, errors.ErrUnsupported }
func (blockingIO) Read([]byte) (int, error)  { return 0, errors.ErrUnsupported }
