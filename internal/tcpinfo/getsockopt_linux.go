package tcpinfo

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// getsockopt reads a socket option into buf and returns how many bytes the
// kernel wrote. x/sys has no raw-bytes getter, and its TCPInfo struct hides
// the byte holding delivery_rate_app_limited in padding, so we call the
// syscall ourselves. (linux/386 needs kernel 4.3+ for this direct syscall.)
func getsockopt(fd, level, opt int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	n := uint32(len(buf)) // socklen_t
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(min(n, uint32(len(buf)))), nil
}
