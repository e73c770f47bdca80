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
	n, err := r.do(syscall.SYS_READ, p, r.rc.Read)
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
			v, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
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

func opName(trap uintptr) string {
	if trap == syscall.SYS_WRITE {
		return "write"
	}
	return "read"
}
