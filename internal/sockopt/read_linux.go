package sockopt

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Read returns the granted values of a connected TCP socket (of a UDP
// socket: the buffers and the MTU). Fields the OS cannot give stay zero.
// It fails only when a buffer size or TCP_MAXSEG cannot be read; the MTU
// and congestion algorithm are best effort (they need a route or TCP).
func Read(c syscall.RawConn) (Info, error) {
	var info Info
	err := control(c, func(fd uintptr) error {
		var err error
		info, err = readFD(int(fd))
		return err
	})
	return info, err
}

func readFD(fd int) (Info, error) {
	var info Info
	var err error
	if info.SndBuf, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF); err != nil {
		return Info{}, fmt.Errorf("reading SO_SNDBUF: %w", err)
	}
	if info.RcvBuf, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); err != nil {
		return Info{}, fmt.Errorf("reading SO_RCVBUF: %w", err)
	}
	if typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err == nil && typ != unix.SOCK_STREAM {
		info.MTU = readMTU(fd) // a UDP socket: buffers and MTU only
		return info, nil
	}
	if info.MSS, err = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG); err != nil {
		return Info{}, fmt.Errorf("reading TCP_MAXSEG: %w", err)
	}
	info.MTU = readMTU(fd)
	if cc, err := unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION); err == nil {
		info.Congestion = cc
	}
	return info, nil
}

// readMTU asks the route cached on the socket; an unconnected socket has
// none (ENOTCONN), which is "unknown", not a failure.
func readMTU(fd int) int {
	family, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return 0
	}
	level, opt := unix.IPPROTO_IP, unix.IP_MTU
	if family == unix.AF_INET6 {
		level, opt = unix.IPPROTO_IPV6, unix.IPV6_MTU
	}
	mtu, err := unix.GetsockoptInt(fd, level, opt)
	if err != nil || mtu < 0 {
		return 0
	}
	return mtu
}
