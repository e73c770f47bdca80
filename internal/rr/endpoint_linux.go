//go:build linux

package rr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// endpoint is one socket of a request-response test, driven by system
// calls on one goroutine, outside Go's network poller: a request's wait
// is a blocking recvmsg on the calling thread, as a C ping-pong tool's is,
// which saves the poller's wake-up (tens of µs on a small VM). With busy
// polling the socket stays non-blocking and recvmsg is called in a loop.
//
// The socket must not be closed by anyone else while the endpoint is in
// use; release hands it back to Go in the state it found it.
type endpoint struct {
	fd       int
	owner    any // the Go value that owns fd, kept alive
	stream   bool
	busy     bool
	kernelTS bool
	restore  bool // the socket was non-blocking: make it so again
	timeout  time.Duration
	closeFD  bool // a socket of our own (crr): release closes it

	msg unix.Msghdr
	iov unix.Iovec
	oob []byte
}

var errTimeout = errors.New("rr: timed out")

// newEndpoint takes over c's socket. stream is true for TCP.
func newEndpoint(c syscall.Conn, stream, busy bool) (*endpoint, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	if err := raw.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return nil, err
	}
	e := &endpoint{fd: fd, owner: c, stream: stream, busy: busy}
	if err := e.setup(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *endpoint) setup() error {
	e.oob = make([]byte, 64)
	if unix.SetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil {
		e.kernelTS = true
	}
	fl, err := unix.FcntlInt(uintptr(e.fd), unix.F_GETFL, 0)
	if err != nil {
		return fmt.Errorf("rr: %w", err)
	}
	nonblocking := fl&unix.O_NONBLOCK != 0
	if !e.busy && nonblocking {
		if err := unix.SetNonblock(e.fd, false); err != nil {
			return fmt.Errorf("rr: %w", err)
		}
		e.restore = true
	}
	if e.busy && !nonblocking {
		if err := unix.SetNonblock(e.fd, true); err != nil {
			return fmt.Errorf("rr: %w", err)
		}
	}
	return nil
}

// release gives the socket back: non-blocking again for Go, or closed if
// it is our own.
func (e *endpoint) release() {
	if e.closeFD {
		_ = unix.Close(e.fd)
		e.fd = -1
		return
	}
	if e.restore {
		_ = unix.SetNonblock(e.fd, true)
	}
	if e.timeout != 0 {
		_ = unix.SetsockoptTimeval(e.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{})
	}
	runtime.KeepAlive(e.owner)
}

func (e *endpoint) kernelTimestamps() bool { return e.kernelTS }

// send writes b whole.
func (e *endpoint) send(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(e.fd, b)
		if err != nil {
			if err == unix.EINTR || err == unix.EAGAIN {
				continue // busy polling: the buffer frees up soon
			}
			if !e.stream && (err == unix.ECONNREFUSED || err == unix.ENOBUFS) {
				return nil // an earlier datagram's ICMP error, or a full queue: this one is lost
			}
			return err
		}
		if !e.stream {
			return nil
		}
		b = b[n:]
	}
	return nil
}

// recv reads what has arrived into b, waiting up to timeout: one datagram
// on UDP, whatever bytes are there on TCP. It returns the kernel's
// receive time when the socket gives one, else 0. A read of 0 bytes on
// TCP is the peer's close (io.EOF is not used: callers test n).
func (e *endpoint) recv(b []byte, timeout time.Duration) (int, int64, error) {
	if e.busy {
		deadline := time.Now().Add(timeout)
		for i := 0; ; i++ {
			n, ts, err := e.recvmsg(b, unix.MSG_DONTWAIT)
			if err != unix.EAGAIN && err != unix.EINTR {
				return n, ts, err
			}
			if i&63 == 63 && time.Now().After(deadline) {
				return 0, 0, errTimeout
			}
		}
	}
	if timeout != e.timeout {
		tv := unix.NsecToTimeval(int64(max(timeout, time.Microsecond)))
		if err := unix.SetsockoptTimeval(e.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return 0, 0, err
		}
		e.timeout = timeout
	}
	for {
		n, ts, err := e.recvmsg(b, 0)
		switch err {
		case nil:
			return n, ts, nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, 0, errTimeout
		}
		return 0, 0, err
	}
}

func (e *endpoint) recvmsg(b []byte, flags int) (int, int64, error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	e.iov.Base = &b[0]
	e.iov.SetLen(len(b))
	e.msg.Iov = &e.iov
	e.msg.Iovlen = 1
	e.msg.Control = &e.oob[0]
	e.msg.SetControllen(len(e.oob))
	e.msg.Flags = 0
	n, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(e.fd), uintptr(unsafe.Pointer(&e.msg)), uintptr(flags))
	if errno != 0 {
		return 0, 0, errno
	}
	var ts int64
	if e.kernelTS {
		ts = timestampOf(e.oob[:e.msg.Controllen])
	}
	return int(n), ts, nil
}

var cmsgHdrLen = unix.CmsgLen(0)

// timestampOf finds SCM_TIMESTAMPNS in a message's ancillary data.
func timestampOf(oob []byte) int64 {
	for len(oob) >= cmsgHdrLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < cmsgHdrLen || l > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && l-cmsgHdrLen >= 16 {
			d := oob[cmsgHdrLen:l]
			return int64(binary.NativeEndian.Uint64(d[0:8]))*1e9 + int64(binary.NativeEndian.Uint64(d[8:16]))
		}
		next := unix.CmsgSpace(l - cmsgHdrLen)
		if next > len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}

// setBusyPoll asks the kernel to busy-poll the device queue for up to
// usec µs on blocking reads (SO_BUSY_POLL). Raising it above the system's
// net.core.busy_read needs CAP_NET_ADMIN.
func (e *endpoint) setBusyPoll(usec int) error {
	return unix.SetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, usec)
}

// CRROptions are the socket options of a crr connection.
type CRROptions struct {
	Local  *net.TCPAddr // local address; nil for any
	SndBuf int
	RcvBuf int
	TOS    int
}

// dialCRR opens a TCP connection to addr on the calling thread with a
// blocking connect, for one transaction. release closes it with a reset
// (SO_LINGER 0), so that a long test leaves no TIME_WAIT sockets behind
// to exhaust the local ports.
func dialCRR(addr *net.TCPAddr, o CRROptions, busy bool) (*endpoint, error) {
	family := unix.AF_INET
	if addr.IP.To4() == nil {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*endpoint, error) {
		_ = unix.Close(fd)
		return nil, err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	_ = unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	if o.SndBuf > 0 {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, o.SndBuf)
	}
	if o.RcvBuf > 0 {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.RcvBuf)
	}
	if o.TOS > 0 {
		if family == unix.AF_INET {
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS, o.TOS)
		} else {
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, o.TOS)
		}
	}
	if o.Local != nil {
		if err := unix.Bind(fd, sockaddr(o.Local, family)); err != nil {
			return fail(err)
		}
	}
	for {
		err = unix.Connect(fd, sockaddr(addr, family))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fail(err)
	}
	e := &endpoint{fd: fd, stream: true, busy: busy, closeFD: true}
	if err := e.setup(); err != nil {
		return fail(err)
	}
	return e, nil
}

func sockaddr(a *net.TCPAddr, family int) unix.Sockaddr {
	if family == unix.AF_INET {
		sa := &unix.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], a.IP.To4())
		return sa
	}
	sa := &unix.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	return sa
}
