package udpflow

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// A sender's socket leaves Go's poller too (takeOverSend): Go registers it
// for write readiness, edge-triggered, so the kernel freeing each sent
// datagram woke the runtime's idle thread in epoll_pwait, a thread switch
// per send call for nothing. The sender writes through a duplicate of the
// descriptor with its own system calls instead, and waits in poll(2) when
// the socket buffer is full.

// sendPoll is the longest one wait for room in the socket buffer lasts
// before the send reports EAGAIN (counted as a full buffer).
const sendPoll = 20 // ms

type rawSend struct {
	fd   int // -1: sends go through Go's net.UDPConn
	msgs []unix.Mmsghdr
	iovs []unix.Iovec
	one  unix.Msghdr
	iov  unix.Iovec
}

func (io *linuxIO) takeOverSend() {
	fd := dupSocket(io.conn)
	if fd < 0 {
		return
	}
	// Nothing else uses a sender's socket once it sends.
	_ = io.conn.Close()
	io.raw.fd = fd
}

// sendGSORaw sends size-byte segments laid end to end in b as one
// datagram the kernel cuts (UDP_SEGMENT).
func (io *linuxIO) sendGSORaw(b []byte) error {
	io.raw.iov.Base = &b[0]
	io.raw.iov.SetLen(len(b))
	io.raw.one.Iov = &io.raw.iov
	io.raw.one.SetIovlen(1)
	io.raw.one.Control = &io.segCmsg[0]
	io.raw.one.SetControllen(len(io.segCmsg))
	for {
		_, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(io.raw.fd), uintptr(unsafe.Pointer(&io.raw.one)), 0)
		if e == unix.EINTR {
			continue
		}
		if e == unix.EAGAIN && io.waitWritable() {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// sendmmsgRaw sends n datagrams of size bytes from buf, as few calls as
// the kernel allows.
func (io *linuxIO) sendmmsgRaw(buf []byte, size, n int) (int, error) {
	r := &io.raw
	if len(r.msgs) < n {
		r.msgs = make([]unix.Mmsghdr, n)
		r.iovs = make([]unix.Iovec, n)
	}
	for i := 0; i < n; i++ {
		r.iovs[i].Base = &buf[i*size]
		r.iovs[i].SetLen(size)
		h := &r.msgs[i].Hdr
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
	}
	sent := 0
	for sent < n {
		k, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(r.fd), uintptr(unsafe.Pointer(&r.msgs[sent])), uintptr(n-sent), 0, 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN && io.waitWritable():
			continue
		case e != 0:
			return sent, e
		}
		sent += int(k)
	}
	return sent, nil
}

// waitWritable waits, at most sendPoll, for room in the socket buffer.
func (io *linuxIO) waitWritable() bool {
	fds := []unix.PollFd{{Fd: int32(io.raw.fd), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, sendPoll)
	return err == nil && n > 0
}
