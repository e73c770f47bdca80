package tcpflow

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/yield"
)

// pollWait is how long a blocked write or read waits before it looks at
// the stream's deadline again: the most a Stop or an Abort waits to be
// noticed.
const pollWait = 20 * time.Millisecond

// sharedSendYield is how often a sender beside other data loops passes
// through the scheduler: two senders at -l 128K moved 6% more yielding
// every 1 ms than every 8 ms, and a quarter less every 32 ms.
const sharedSendYield = time.Millisecond

// yieldPeriod is how often a data loop passes through the scheduler, if
// at all, when loops data loops (TCP's and UDP's) run in the process. A reader yields
// every yield.Every. A lone sender does not: with nothing else to run,
// the monitor that takes its P away during a long write leaves the P
// idle, and the thread takes it back as the write returns, while a yield
// wakes another thread, which takes the goroutine over to another CPU
// (without its yields a lone sender moved 9-15% more at -l 1M). A sender
// beside other loops yields every sharedSendYield: not yielding at all
// measured worse there. See bench/RESULTS.md.
func yieldPeriod(reading bool, loops int32) (time.Duration, bool) {
	switch {
	case reading:
		return yield.Every, true
	case loops > 1:
		return sharedSendYield, true
	}
	return 0, false
}

// ownedFD is a stream's own duplicate of its socket's descriptor, in
// blocking mode and unknown to Go's poller (takeOver). The data loop uses
// fd without the lock; everything else (TCP_INFO, shutdown, close) takes
// it, and the descriptor is closed only once the loop has ended, so that
// its number can't be reused under a running loop.
type ownedFD struct {
	mu      sync.RWMutex
	fd      int
	owned   bool          // fd is the stream's; Go's descriptor is closed
	running bool          // the data loop may still use fd
	closed  bool          // Close was called
	yield   yield.Yielder // the data loop's passes through the scheduler
	low     lowWater      // a receiver's SO_RCVLOWAT
}

// takeOver moves the data loop off Go's poller. Go registers the socket
// with its epoll instance, edge-triggered, so that every segment or ACK
// wakes the thread the runtime parked in epoll_pwait whether or not a
// goroutine waits on the socket, and a goroutine that waits there costs a
// second thread switch to run. The stream instead keeps a duplicate of
// the descriptor in blocking mode, with send and receive timeouts of
// pollWait so that it still sees its deadline, and closes Go's (which
// takes the socket out of the epoll set). Its thread then sleeps in
// write or read itself. It reports false, leaving Go's descriptor in
// use, when the duplicate can't be made so.
func (s *Stream) takeOver() bool {
	raw, err := s.Conn.SyscallConn()
	if err != nil {
		return false
	}
	fd := -1
	if raw.Control(func(c uintptr) {
		if d, err := unix.FcntlInt(c, unix.F_DUPFD_CLOEXEC, 0); err == nil {
			fd = d
		}
	}) != nil || fd < 0 {
		return false
	}
	tv := unix.NsecToTimeval(int64(pollWait))
	if unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil ||
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) != nil ||
		unix.SetNonblock(fd, false) != nil {
		_ = unix.SetNonblock(fd, true) // the flag is shared with Go's descriptor
		_ = unix.Close(fd)
		return false
	}
	s.own.mu.Lock()
	s.own.fd, s.own.owned, s.own.running = fd, true, true
	s.own.mu.Unlock()
	yield.Enter(!s.Sender)
	_ = s.Conn.Close()
	return true
}

// offPoller reports whether the data loop uses the stream's own
// descriptor.
func (s *Stream) offPoller() bool {
	s.own.mu.RLock()
	defer s.own.mu.RUnlock()
	return s.own.owned
}

// blockingIO moves the bytes through the stream's own descriptor.
type blockingIO struct{ s *Stream }

func (b blockingIO) Write(p []byte) (int, error) { return b.s.blockingCall(unix.SYS_WRITE, p) }

func (b blockingIO) Read(p []byte) (int, error) {
	b.s.adjustLowWater(len(p))
	trap := uintptr(unix.SYS_READ)
	if b.s.discard {
		trap = unix.SYS_RECVFROM // with MSG_TRUNC (recvFlags): --skip-rx-copy
	}
	n, err := b.s.blockingCall(trap, p)
	if n > 0 && n < len(p) {
		b.s.lowerLowWater(n, len(p))
	}
	if n == 0 && err == nil && len(p) > 0 {
		return 0, io.EOF
	}
	return n, err
}

// adjustLowWater sets, raises or lowers the socket's low-water mark
// when lowWater says so (see lowwater.go). With --trip-times there is
// none: a mark would hold a block's last bytes back until a mark's worth
// were queued, and its latency would count that wait.
func (s *Stream) adjustLowWater(block int) {
	n := s.bytes.Load()
	if n == 0 || s.trip != nil {
		return
	}
	// The last read's return, just before this read: the time of the
	// byte count n, without a clock read per read.
	now := s.lastNano.Load()
	if !s.own.low.due(now) {
		return
	}
	rcvbuf, err := unix.GetsockoptInt(s.own.fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		s.own.low.later(now)
		return
	}
	if mark := s.own.low.decide(now, rcvbuf, block, n); mark > 0 {
		if unix.SetsockoptInt(s.own.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, mark) != nil {
			_ = unix.SetsockoptInt(s.own.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, 1)
			s.own.low.backOff(now)
		}
	}
}

// lowerLowWater takes the mark off after a read of n bytes, short of a
// block, when lowWater says so. The mark is tested first so that a
// short read without one costs no clock read.
func (s *Stream) lowerLowWater(n, block int) {
	if s.own.low.mark > 0 && s.own.low.read(int64(time.Since(s.epoch)), n, block) {
		_ = unix.SetsockoptInt(s.own.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, 1)
	}
}

// blockingCall makes one call that moves bytes (a partial count is fine:
// the caller loops), sleeping in the kernel while the socket isn't ready.
// It returns os.ErrDeadlineExceeded once the stream's deadline has
// passed, as a Go write or read does.
func (s *Stream) blockingCall(trap uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return s.blocking(opName(trap), func() (uintptr, unix.Errno) {
		v, _, e := unix.Syscall6(trap, uintptr(s.own.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), recvFlags(trap), 0, 0)
		return v, e
	})
}

// sendZeros sends n bytes of the zero file from its start with sendfile
// (-Z), through the stream's own descriptor as blockingCall does.
func (b blockingIO) sendZeros(z *zeroSource, n int) (int, error) {
	n = min(n, z.n)
	if n == 0 {
		return 0, nil
	}
	return b.s.blocking("sendfile", func() (uintptr, unix.Errno) {
		var off int64 // from the file's start each time; its own offset is not moved
		v, _, e := unix.Syscall6(unix.SYS_SENDFILE, uintptr(b.s.own.fd), z.fd, uintptr(unsafe.Pointer(&off)), uintptr(n), 0, 0)
		return v, e
	})
}

// blocking repeats call, which may sleep in the kernel up to the
// socket's timeout, until it moves bytes or fails, looking at the
// stream's deadline between tries.
func (s *Stream) blocking(op string, call func() (uintptr, unix.Errno)) (int, error) {
	for {
		now := time.Now().UnixNano()
		if d := s.deadline.Load(); d != 0 && now >= d {
			return 0, os.ErrDeadlineExceeded
		}
		if period, ok := yieldPeriod(op == "read", yield.Loops()); ok {
			s.own.yield.AtPeriod(now, period)
		}
		// A call that may block lets the runtime have the P
		// (RawSyscall here measured no better, and would stall the
		// goroutines queued on it).
		v, e := call()
		switch e {
		case 0:
			return int(v), nil
		case unix.EAGAIN, unix.EINTR: // the timeout, with nothing moved: look at the deadline
		default:
			return 0, &net.OpError{Op: op, Net: "tcp", Err: e}
		}
	}
}

// closeWrite half-closes the stream's socket.
func (s *Stream) closeWrite() {
	s.own.mu.RLock()
	defer s.own.mu.RUnlock()
	if !s.own.owned {
		_ = s.Conn.CloseWrite()
		return
	}
	_ = unix.Shutdown(s.own.fd, unix.SHUT_WR)
}

// loopEnded releases the descriptor to Close.
func (s *Stream) loopEnded() {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	if s.own.running {
		yield.Leave(!s.Sender)
	}
	s.own.running = false
	if s.own.owned && s.own.closed {
		_ = unix.Close(s.own.fd)
	}
}

// Close closes the stream's socket. A data loop still running is ended
// (shutdown wakes a blocked call) and closes the descriptor as it ends.
func (s *Stream) Close() error {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	if !s.own.owned {
		return s.Conn.Close()
	}
	if s.own.closed {
		return nil
	}
	s.own.closed = true
	if s.own.running {
		s.stopping.Store(true)
		s.deadline.Store(1)
		_ = unix.Shutdown(s.own.fd, unix.SHUT_RDWR)
		return nil
	}
	return unix.Close(s.own.fd)
}

// SyscallConn gives access to the stream's socket (TCP_INFO), through
// whichever descriptor the stream uses.
func (s *Stream) SyscallConn() (syscall.RawConn, error) { return ownRaw{s}, nil }

// ownRaw is a syscall.RawConn over the stream's current descriptor.
type ownRaw struct{ s *Stream }

func (r ownRaw) Control(f func(fd uintptr)) error {
	r.s.own.mu.RLock()
	defer r.s.own.mu.RUnlock()
	if !r.s.own.owned {
		rc, err := r.s.Conn.SyscallConn()
		if err != nil {
			return err
		}
		return rc.Control(f)
	}
	if r.s.own.closed {
		return syscall.EBADF
	}
	f(uintptr(r.s.own.fd))
	return nil
}

func (r ownRaw) Read(f func(fd uintptr) bool) error  { return r.wait(f, unix.POLLIN, false) }
func (r ownRaw) Write(f func(fd uintptr) bool) error { return r.wait(f, unix.POLLOUT, true) }

// wait calls f until it reports done, polling for events in between (the
// RawConn contract; the stream itself doesn't use it).
func (r ownRaw) wait(f func(fd uintptr) bool, events int16, write bool) error {
	for {
		var done bool
		var fd int
		err := r.Control(func(c uintptr) { fd = int(c); done = f(c) })
		if err != nil || done {
			return err
		}
		if !r.s.offPoller() {
			rc, err := r.s.Conn.SyscallConn()
			if err != nil {
				return err
			}
			if write {
				return rc.Write(f)
			}
			return rc.Read(f)
		}
		if d := r.s.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
			return os.ErrDeadlineExceeded
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
		if _, err := unix.Poll(pfd, int(pollWait/time.Millisecond)); err != nil && err != unix.EINTR {
			return err
		}
	}
}
