package tcpinfo

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// sample is what one Get produces; one allocation holds both, since the
// closure passed to Control makes whatever it captures escape.
type sample struct {
	info Info
	err  error
}

// Get reads TCP_INFO from a TCP connection's raw conn and fills Info.
// Fields a kernel too old to report stay zero.
func Get(c syscall.RawConn) (*Info, error) {
	s := new(sample)
	if err := c.Control(s.read); err != nil {
		return nil, err
	}
	if s.err != nil {
		return nil, s.err
	}
	return &s.info, nil
}

func (s *sample) read(fd uintptr) {
	var buf [infoLen]byte
	n, err := getsockopt(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO, buf[:])
	switch {
	case err != nil:
		s.err = fmt.Errorf("getsockopt TCP_INFO: %w", err)
	case n < minInfoLen:
		s.err = fmt.Errorf("getsockopt TCP_INFO: kernel returned %d bytes, want at least %d", n, minInfoLen)
	default:
		decodeInfo(buf[:n], &s.info)
	}
}

// Queued is how many received bytes wait unread in a TCP socket's
// receive queue (SIOCINQ): what the kernel has taken in and the reader
// has not yet read.
func Queued(c syscall.RawConn) (int, error) {
	var n int
	var err error
	if cerr := c.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); cerr != nil {
		return 0, cerr
	}
	if err != nil {
		return 0, fmt.Errorf("ioctl SIOCINQ: %w", err)
	}
	return n, nil
}

// ReceiveMemory is the memory the kernel charges to a socket's receiving
// side (SO_MEMINFO's SK_MEMINFO_RMEM_ALLOC): every buffer it holds, in
// order and out of order, at its true size. It bounds the payload held
// out of order: at most this, less what waits unread in order.
func ReceiveMemory(c syscall.RawConn) (int64, error) {
	var buf [4 * unix.SK_MEMINFO_VARS]byte
	var n int
	var err error
	if cerr := c.Control(func(fd uintptr) { n, err = getsockopt(int(fd), unix.SOL_SOCKET, unix.SO_MEMINFO, buf[:]) }); cerr != nil {
		return 0, cerr
	}
	if err != nil {
		return 0, fmt.Errorf("getsockopt SO_MEMINFO: %w", err)
	}
	if n < 4*(unix.SK_MEMINFO_RMEM_ALLOC+1) {
		return 0, fmt.Errorf("getsockopt SO_MEMINFO: kernel returned %d bytes", n)
	}
	i := 4 * unix.SK_MEMINFO_RMEM_ALLOC
	return int64(binary.NativeEndian.Uint32(buf[i : i+4])), nil
}
