package udpflow

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// recvPoll is how long a blocked receive waits before it looks at its
// deadline again: the most a Stop or an Abort waits to be noticed.
const recvPoll = 20 * time.Millisecond

// takeOver moves the receive path off Go's poller. Go's poller registers
// the socket with its epoll instance, edge-triggered, so that every
// arrival wakes the thread the runtime parked in epoll_pwait, whether or
// not a goroutine waits on the socket; and a goroutine that waits there
// costs a second thread switch to run. A receiver instead keeps a
// duplicate of the descriptor, in blocking mode, and closes Go's (which
// takes it out of the epoll set): its thread then sleeps in recvmmsg
// itself and is the only one the arrivals wake. It does so only when the
// duplicate can be made blocking with a receive timeout; otherwise reads
// stay on Go's poller.
func (io *linuxIO) takeOver() {
	fd := dupSocket(io.conn)
	if fd < 0 {
		return
	}
	tv := unix.NsecToTimeval(int64(recvPoll))
	if unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil || unix.SetNonblock(fd, false) != nil {
		_ = unix.SetNonblock(fd, true) // the flag is shared with Go's descriptor
		_ = unix.Close(fd)
		return
	}
	// Nothing else reads the socket once the receiver runs; a Go
	// deadline set before this is carried by io.deadline.
	_ = io.conn.Close()
	io.rfd = fd
	io.mmsgs = make([]unix.Mmsghdr, len(io.recvMsgs))
	io.iovs = make([]unix.Iovec, len(io.recvMsgs))
	for i := range io.recvMsgs {
		m := &io.recvMsgs[i]
		io.iovs[i].Base = &m.Buffers[0][0]
		io.iovs[i].SetLen(len(m.Buffers[0]))
		h := &io.mmsgs[i].Hdr
		h.Iov = &io.iovs[i]
		h.SetIovlen(1)
		h.Control = &m.OOB[0]
	}
}

// dupSocket is a duplicate of conn's descriptor, unknown to Go's poller;
// -1 if it can't be made.
func dupSocket(conn interface {
	SyscallConn() (syscall.RawConn, error)
}) int {
	raw, err := conn.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if raw.Control(func(s uintptr) {
		if d, err := unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0); err == nil {
			fd = d
		}
	}) != nil {
		return -1
	}
	return fd
}

// recvBlocking fills io.recvMsgs (N, NN) from the blocking descriptor: it
// sleeps in recvmmsg until a datagram arrives, then takes what else is
// queued (MSG_WAITFORONE). It returns os.ErrDeadlineExceeded once the
// deadline has passed.
func (io *linuxIO) recvBlocking() (int, error) {
	if d := io.coalesce; d > 0 {
		io.coalesce = 0
		_ = unix.Nanosleep(&unix.Timespec{Nsec: int64(d)}, nil)
	}
	for {
		if d := io.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
			return 0, os.ErrDeadlineExceeded
		}
		for i := range io.mmsgs {
			io.mmsgs[i].Hdr.SetControllen(len(io.recvMsgs[i].OOB))
			io.mmsgs[i].Hdr.Flags = 0
		}
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(io.rfd), uintptr(unsafe.Pointer(&io.mmsgs[0])),
			uintptr(len(io.mmsgs)), unix.MSG_WAITFORONE, 0, 0)
		switch e {
		case 0:
		case unix.EAGAIN, unix.EINTR: // the receive timeout: look at the deadline
			continue
		default:
			return 0, e
		}
		n := int(r)
		bytes := 0
		for i := 0; i < n; i++ {
			io.recvMsgs[i].N = int(io.mmsgs[i].Len)
			io.recvMsgs[i].NN = int(io.mmsgs[i].Hdr.Controllen)
			bytes += io.recvMsgs[i].N
		}
		io.coalesce = coalesceWait(n, len(io.mmsgs), bytes, io.feat.KernelTimestamps)
		return n, nil
	}
}

// setReadDeadline ends receives at t (the zero time: never).
func (io *linuxIO) setReadDeadline(t time.Time) {
	var ns int64
	if !t.IsZero() {
		ns = max(t.UnixNano(), 1)
	}
	io.deadline.Store(ns)
	// Before takeOver, reads are Go's; after, the call fails harmlessly.
	_ = io.conn.SetReadDeadline(t)
}

// close releases the descriptors takeOver and takeOverSend kept.
func (io *linuxIO) close() {
	if io.rfd >= 0 {
		_ = unix.Close(io.rfd)
		io.rfd = -1
	}
	if io.raw.fd >= 0 {
		_ = unix.Close(io.raw.fd)
		io.raw.fd = -1
	}
}
