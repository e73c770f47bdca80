//go:build linux

package rr

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
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
// use; release hands a TCP connection back to Go in the state it found
// it, and closes a UDP socket (newEndpoint took it out of Go's hands).
type endpoint struct {
	fd       int
	owner    any // the Go value that owns fd, kept alive
	stream   bool
	busy     bool
	kernelTS bool
	// txStamps: the kernel stamps each send's leaving (software, and
	// hardware where the NIC has been set to), read back from the
	// socket's error queue by sentStamps (TCP) or readSendStamps (UDP).
	txStamps bool
	txSends  uint32 // UDP sends so far: the next send's stamp number (OPT_ID)
	// errMsgs, errIovs and errOOB are readSendStamps' recvmmsg of the
	// error queue, made on its first call.
	errMsgs []unix.Mmsghdr
	errIovs []unix.Iovec
	errOOB  []byte
	rxHW    int64         // the hardware receive stamp of the last recvmsg, 0 if none
	restore bool          // the socket was non-blocking: make it so again
	timeout time.Duration // SO_RCVTIMEO as last set
	// rawHold is how long a blocking read waits as a raw system call
	// before it goes on as an ordinary one (rawWait; 0 when busy polling).
	rawHold time.Duration
	rawSlot bool // rawHold holds one of rawWaiters' slots
	closeFD bool // a socket of our own (crr): release closes it

	msg unix.Msghdr
	iov unix.Iovec
	oob []byte
	// scratch receives an error-queue message's (empty) payload.
	scratch [64]byte
}

var errTimeout = errors.New("rr: timed out")

// newEndpoint takes over c's socket. stream is true for TCP.
// With txStamps the kernel is asked to stamp each send (for the prober's
// lockstep transactions: one send in flight at a time).
//
// A UDP socket is taken out of Go's network poller altogether: the
// endpoint keeps a duplicate of its descriptor and closes c, which
// removes the socket from Go's epoll set. Otherwise every datagram's
// arrival (and every send stamp queued) also wakes the runtime thread
// waiting in epoll_wait, which finds nothing to run: one more context
// switch per transaction on each end, half again the CPU of the
// transaction itself (bench/RESULTS.md). release closes the duplicate;
// c's addresses stay readable, and closing it again is harmless. A TCP
// connection stays Go's: closing it would be the peer's end of the
// test, and its caller decides when that is.
func newEndpoint(c syscall.Conn, stream, busy, txStamps bool) (*endpoint, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(f uintptr) {
		fd = int(f)
		if !stream {
			fd, dupErr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0)
		}
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, fmt.Errorf("rr: %w", dupErr)
	}
	e := &endpoint{fd: fd, owner: c, stream: stream, busy: busy, txStamps: txStamps}
	if !stream {
		e.closeFD = true
		if cl, ok := c.(interface{ Close() error }); ok {
			_ = cl.Close()
		}
	}
	if err := e.setup(); err != nil {
		if e.closeFD {
			_ = unix.Close(fd)
		}
		return nil, err
	}
	return e, nil
}

// Receive stamps: software always, hardware where the NIC already
// stamps (ptp4l or the like set it up; we don't change a device's
// configuration). Reported with SCM_TIMESTAMPING, three timespecs.
const (
	rxStampFlags = unix.SOF_TIMESTAMPING_RX_SOFTWARE | unix.SOF_TIMESTAMPING_SOFTWARE |
		unix.SOF_TIMESTAMPING_RX_HARDWARE | unix.SOF_TIMESTAMPING_RAW_HARDWARE
	txStampFlags = unix.SOF_TIMESTAMPING_TX_SOFTWARE | unix.SOF_TIMESTAMPING_TX_HARDWARE |
		unix.SOF_TIMESTAMPING_OPT_TSONLY
)

func (e *endpoint) setup() error {
	e.oob = make([]byte, 256) // a timestamping message and an extended error beside it
	switch {
	case strconv.IntSize != 64:
		// parseStamps reads 64-bit layouts only: no kernel stamps here.
		e.txStamps = false
	case unix.SetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, e.stampFlags()) == nil:
		e.kernelTS = true
	case unix.SetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil:
		e.kernelTS, e.txStamps = true, false
	default:
		e.txStamps = false
	}
	fl, err := unix.FcntlInt(uintptr(e.fd), unix.F_GETFL, 0)
	if err != nil {
		return fmt.Errorf("rr: %w", err)
	}
	nonblocking := fl&unix.O_NONBLOCK != 0
	e.waitRaw(1)
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
	e.releaseRawSlot()
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
	if e.txStamps {
		// Go's poller gets the socket back with no stamps still queued
		// to wake it, and none to come.
		e.txStamps = false
		_ = unix.SetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, e.stampFlags())
		for range 64 {
			if _, ok := e.errQueueStamps(); !ok {
				break
			}
		}
	}
	runtime.KeepAlive(e.owner)
}

func (e *endpoint) kernelTimestamps() bool { return e.kernelTS }

func (e *endpoint) stampFlags() int {
	switch {
	case !e.txStamps:
		return rxStampFlags
	case e.stream:
		return rxStampFlags | txStampFlags
	}
	// Numbered on UDP, each send by one (TCP numbers bytes instead), so
	// that sentStamps knows its stamp when it sees it.
	return rxStampFlags | txStampFlags | unix.SOF_TIMESTAMPING_OPT_ID
}

// sendStamps says whether sentStamps can return anything.
func (e *endpoint) sendStamps() bool { return e.txStamps }

// sentStamps returns the stamps of a TCP connection's last send, read
// from the socket's error queue without waiting (zero if none yet: a
// NIC's hardware stamp may come later than the response). Called once
// per lockstep transaction, after the response; the queue is drained and
// the last software and hardware stamps in it taken. TCP's stamps are
// not numbered by send (a UDP prober reads its numbered stamps in
// batches, readSendStamps).
func (e *endpoint) sentStamps() kernelStamps {
	var last kernelStamps
	for range 16 { // bounded: the queue holds a send's stamps, not a stream
		st, ok := e.errQueueStamps()
		if !ok {
			break // EAGAIN: drained
		}
		if st.sw != 0 {
			last.sw = st.sw
		}
		if st.hw != 0 {
			last.hw = st.hw
		}
	}
	return last
}

// lastSendID is the stamp number of the last UDP send (OPT_ID).
func (e *endpoint) lastSendID() uint32 { return e.txSends - 1 }

// sendStampBatch is how many transactions' stamps fit the socket's
// receive buffer at once (stampBatchFor).
func (e *endpoint) sendStampBatch() int {
	rcvbuf, err := unix.GetsockoptInt(e.fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		return 1
	}
	return stampBatchFor(rcvbuf)
}

// readSendStamps drains the error queue without waiting and returns
// how many stamps it left in out: the newest len(out), in no particular
// order (a queue that held more, the stamps of lost requests, say, had
// its older ones read over). A batch's stamps are the newest.
func (e *endpoint) readSendStamps(out []kernelStamps) int {
	if len(e.errMsgs) != len(out) {
		e.errMsgs = make([]unix.Mmsghdr, len(out))
		e.errIovs = make([]unix.Iovec, len(out))
		e.errOOB = make([]byte, len(out)*len(e.oob))
		for i := range e.errMsgs {
			e.errIovs[i].Base = &e.scratch[0] // the payload is empty (OPT_TSONLY): a shared sink
			e.errIovs[i].SetLen(len(e.scratch))
			h := &e.errMsgs[i].Hdr
			h.Iov = &e.errIovs[i]
			h.SetIovlen(1)
			h.Control = &e.errOOB[i*len(e.oob)]
		}
	}
	got := 0
	// Bounded: the queue holds at most the receive buffer's worth of
	// stamps, which 16 full reads of a batch's room exceed.
	for range 16 {
		for i := range e.errMsgs {
			e.errMsgs[i].Hdr.SetControllen(len(e.oob))
			e.errMsgs[i].Hdr.Flags = 0
		}
		// Raw: a read that never waits needs no word to the scheduler.
		r, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(e.fd), uintptr(unsafe.Pointer(&e.errMsgs[0])),
			uintptr(len(e.errMsgs)), uintptr(unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT), 0, 0)
		if errno != 0 {
			break // EAGAIN: drained
		}
		n := int(r)
		for i := range n {
			oob := e.errOOB[i*len(e.oob):]
			out[i] = parseStamps(oob[:min(int(e.errMsgs[i].Hdr.Controllen), len(e.oob))])
		}
		// Past a full read, out[n:] still holds its newest stamps.
		got = max(got, n)
		if n < len(out) {
			break
		}
	}
	return got
}

// errQueueStamps reads one message from the error queue, without
// waiting; false when there is none.
func (e *endpoint) errQueueStamps() (kernelStamps, bool) {
	e.iov.Base = &e.scratch[0]
	e.iov.SetLen(len(e.scratch))
	e.msg.Iov = &e.iov
	e.msg.Iovlen = 1
	e.msg.Control = &e.oob[0]
	e.msg.SetControllen(len(e.oob))
	e.msg.Flags = 0
	// Raw: a read that never waits needs no word to the scheduler.
	_, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(e.fd), uintptr(unsafe.Pointer(&e.msg)), uintptr(unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT))
	if errno != 0 {
		return kernelStamps{}, false
	}
	return parseStamps(e.oob[:e.msg.Controllen]), true
}

// send writes b whole.
func (e *endpoint) send(b []byte) error {
	if !e.stream && e.txStamps {
		e.txSends++
	}
	if !e.stream && e.rawHold > 0 && len(b) > 0 {
		return e.sendRaw(b)
	}
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
//
// A blocking wait starts as a raw system call (see rawWait) for up to
// e.rawHold, where a back-to-back transaction's next message arrives;
// a longer wait goes on through Go's ordinary system call, which lets
// the runtime use the goroutine's P meanwhile.
func (e *endpoint) recv(b []byte, timeout time.Duration) (int, int64, error) {
	if e.busy {
		deadline := time.Now().Add(timeout)
		for i := 0; ; i++ {
			n, ts, err := e.recvmsg(b, unix.MSG_DONTWAIT, true) // raw: it never waits
			if err != unix.EAGAIN && err != unix.EINTR {
				return n, ts, err
			}
			if i&63 == 63 && time.Now().After(deadline) {
				return 0, 0, errTimeout
			}
		}
	}
	if raw := min(timeout, e.rawHold); raw > 0 {
		if err := e.setRecvTimeout(raw); err != nil {
			return 0, 0, err
		}
		n, ts, err := e.recvRaw(b)
		if err != unix.EAGAIN {
			return n, ts, err
		}
		if timeout <= raw {
			return 0, 0, errTimeout
		}
		timeout -= raw
	}
	if err := e.setRecvTimeout(timeout); err != nil {
		return 0, 0, err
	}
	for {
		n, ts, err := e.recvmsg(b, 0, false)
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

// recvRaw is a blocking read as a raw system call, until a message or
// SO_RCVTIMEO (EAGAIN).
func (e *endpoint) recvRaw(b []byte) (int, int64, error) {
	for {
		n, ts, err := e.recvmsg(b, 0, true)
		if err != unix.EINTR {
			return n, ts, err
		}
		// The runtime's preemption signal (a GC's stop-the-world, or
		// sysmon's after 10 ms on this P): a raw call never checks for
		// it, so yield here before waiting again.
		runtime.Gosched()
	}
}

// sendRaw sends a datagram as a raw system call (see rawWait). A UDP
// send waits for no peer, at most (rarely) for room in the socket's
// buffer, which SO_SNDTIMEO bounds; a signal ends that wait with EINTR.
func (e *endpoint) sendRaw(b []byte) error {
	for {
		_, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(e.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			runtime.Gosched() // as recvRaw
		case unix.EAGAIN, unix.ECONNREFUSED, unix.ENOBUFS:
			return nil // no room in time, an earlier datagram's ICMP error, a full queue: this one is lost
		default:
			return errno
		}
	}
}

// rawWaiters counts the endpoints whose waits start as raw system calls
// (rawSlot). Each keeps a P while it waits, so a server's loops take at
// most GOMAXPROCS − 1 at a time, one P always left for the rest of the
// process (its other tests and control connections); a prober may take
// the last (waitRaw). The endpoints past that wait as ordinary system
// calls.
var rawWaiters atomic.Int32

// waitRaw makes the endpoint's waits start raw if a slot is free with
// leave Ps still left to the process: 1 for a server's loops; 0 for a
// client's prober, whose process has nothing else to run meanwhile (the
// rr command runs it with a single P), where the rest of the process
// (its control connection's watcher, a daemon's scheduler) gets the P
// back when sysmon preempts the wait, within about 10 ms.
func (e *endpoint) waitRaw(leave int) {
	if e.busy || e.rawSlot || !acquireRawSlot(leave) {
		return
	}
	e.rawHold, e.rawSlot = rawWait, true
	if !e.stream {
		// A raw send must end on the runtime's signal too (sendRaw).
		tv := unix.NsecToTimeval(int64(rawWait))
		if err := unix.SetsockoptTimeval(e.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
			e.releaseRawSlot()
		}
	}
}

func acquireRawSlot(leave int) bool {
	limit := int32(runtime.GOMAXPROCS(0) - leave)
	for {
		n := rawWaiters.Load()
		if n >= limit {
			return false
		}
		if rawWaiters.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (e *endpoint) releaseRawSlot() {
	if e.rawSlot {
		rawWaiters.Add(-1)
	}
	e.rawSlot, e.rawHold = false, 0
}

// setRecvTimeout sets SO_RCVTIMEO unless it is set so already: back to
// back, every wait is a raw one of e.rawHold and costs no setsockopt.
func (e *endpoint) setRecvTimeout(d time.Duration) error {
	if d == e.timeout {
		return nil
	}
	tv := unix.NsecToTimeval(int64(max(d, time.Microsecond)))
	if err := unix.SetsockoptTimeval(e.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	e.timeout = d
	return nil
}

// rawWait bounds the part of a blocking read made as a raw system call
// (unix.RawSyscall), which skips the runtime's entersyscall and
// exitsyscall: the goroutine keeps its P through the wait, as a C
// ping-pong tool keeps its CPU, and on the wake-up nothing is taken back
// from sysmon or handed between threads. The trade-off: the runtime sees
// a running goroutine, not a system call, so it does not give the P to
// other goroutines while the read waits (sysmon preempts after 10 ms, as
// it does a busy goroutine), and a stop-the-world (a GC's) waits for the
// read to return. Both are bounded. SO_RCVTIMEO is always set, so the
// runtime's preemption signal (SIGURG) ends the read with EINTR instead
// of restarting it (man 7 signal), and recvRaw yields; and the raw part
// lasts at most rawWait before the wait goes on as an ordinary system
// call, so an idle test (long --interval, a quiet server) holds no P. A
// millisecond covers a back-to-back transaction's wait on any path whose
// latency is the kernel's, and is a tenth of the slice sysmon allows.
const rawWait = time.Millisecond

func (e *endpoint) recvmsg(b []byte, flags int, raw bool) (int, int64, error) {
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
	var n uintptr
	var errno unix.Errno
	if raw {
		n, _, errno = unix.RawSyscall(unix.SYS_RECVMSG, uintptr(e.fd), uintptr(unsafe.Pointer(&e.msg)), uintptr(flags))
	} else {
		n, _, errno = unix.Syscall(unix.SYS_RECVMSG, uintptr(e.fd), uintptr(unsafe.Pointer(&e.msg)), uintptr(flags))
	}
	if errno != 0 {
		return 0, 0, errno
	}
	var ts int64
	e.rxHW = 0
	if e.kernelTS {
		st := parseStamps(e.oob[:e.msg.Controllen])
		ts, e.rxHW = st.sw, st.hw
	}
	return int(n), ts, nil
}

// receivedHW is the hardware receive stamp of the last read (0 if none).
func (e *endpoint) receivedHW() int64 { return e.rxHW }

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
