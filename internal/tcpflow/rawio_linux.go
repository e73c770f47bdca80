package tcpflow

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawIO moves a stream's bytes with raw write(2)/read(2) calls on the
// non-blocking socket. A plain syscall tells the Go scheduler that the
// thread may block; a 128 KiB loopback write spends longer than sysmon's
// 20 µs patience in the kernel, so nearly every write would hand the P to
// another thread and wake it with a futex. The socket never blocks (EAGAIN
// parks the goroutine on the netpoller as usual), so holding the P through
// the call is safe and saves that churn.
type rawIO struct {
	rc syscall.RawConn
	// trunc reads with recv(MSG_TRUNC): the kernel discards the bytes
	// it counts (--skip-rx-copy).
	trunc bool
}

func newRawIO(c *net.TCPConn) (*rawIO, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &rawIO{rc: rc}, nil
}

func (r *rawIO) Write(p []byte) (int, error) {
	return r.do(syscall.SYS_WRITE, p, r.rc.Write)
}

func (r *rawIO) Read(p []byte) (int, error) {
	trap := uintptr(syscall.SYS_READ)
	if r.trunc {
		trap = syscall.SYS_RECVFROM
	}
	n, err := r.do(trap, p, r.rc.Read)
	if n == 0 && err == nil && len(p) > 0 {
		return 0, io.EOF
	}
	return n, err
}

// do makes one successful call (a partial count is fine: the caller loops),
// waiting on the netpoller while the socket is not ready. Deadlines and
// closing are the net package's, through RawConn.
func (r *rawIO) do(trap uintptr, p []byte, wait func(func(uintptr) bool) error) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := wait(func(fd uintptr) bool {
		for {
			v, _, e := syscall.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), recvFlags(trap), 0, 0)
			switch e {
			case 0:
				n = int(v)
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
	})
	if err != nil {
		return n, err
	}
	if errno != 0 {
		return n, &net.OpError{Op: opName(trap), Net: "tcp", Err: errno}
	}
	return n, nil
}

// recvFlags is recvfrom's flags argument: MSG_TRUNC, which on a TCP
// socket makes the kernel count and drop the bytes without copying them
// (Linux 4.x on; the pointer is not written). read and write take three
// arguments and ignore the rest.
func recvFlags(trap uintptr) uintptr {
	if trap == syscall.SYS_RECVFROM {
		return syscall.MSG_TRUNC
	}
	return 0
}

func opName(trap uintptr) string {
	if trap == syscall.SYS_WRITE {
		return "write"
	}
	return "read"
}
