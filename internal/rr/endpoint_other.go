//go:build !linux

package rr

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// endpoint is one socket of a request-response test, through Go's
// network poller: blocking system calls on the calling thread and kernel
// receive timestamps are Linux's (endpoint_linux.go). Busy polling here
// is a read with a short deadline in a loop.
type endpoint struct {
	conn   net.Conn
	stream bool
	busy   bool
	own    bool
}

var errTimeout = errors.New("rr: timed out")

func newEndpoint(c syscall.Conn, stream, busy, _ bool) (*endpoint, error) {
	nc, ok := c.(net.Conn)
	if !ok {
		return nil, errors.New("rr: not a network connection")
	}
	return &endpoint{conn: nc, stream: stream, busy: busy}, nil
}

func (e *endpoint) release() {
	_ = e.conn.SetReadDeadline(time.Time{})
	if e.own {
		_ = e.conn.Close()
	}
}

func (e *endpoint) kernelTimestamps() bool { return false }

func (e *endpoint) sendStamps() bool { return false }

func (e *endpoint) sentStamps() kernelStamps { return kernelStamps{} }

func (e *endpoint) lastSendID() uint32 { return 0 }

func (e *endpoint) sendStampBatch() int { return 1 }

func (e *endpoint) readSendStamps([]kernelStamps) int { return 0 }

func (e *endpoint) receivedHW() int64 { return 0 }

func (e *endpoint) send(b []byte) error {
	_, err := e.conn.Write(b)
	if err != nil && !e.stream {
		return nil // a datagram lost to an ICMP error or a full queue
	}
	return err
}

func (e *endpoint) recv(b []byte, timeout time.Duration) (int, int64, error) {
	deadline := time.Now().Add(timeout)
	for {
		step := deadline
		if e.busy {
			step = time.Now().Add(time.Microsecond)
		}
		_ = e.conn.SetReadDeadline(step)
		n, err := e.conn.Read(b)
		if err == nil || n > 0 {
			return n, 0, nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if e.busy && time.Now().Before(deadline) {
				continue
			}
			return 0, 0, errTimeout
		}
		if e.stream && errors.Is(err, net.ErrClosed) {
			return 0, 0, err
		}
		if e.stream {
			return 0, 0, nil // EOF: the peer closed
		}
		return 0, 0, err
	}
}

func (e *endpoint) setBusyPoll(int) error {
	return errors.New("SO_BUSY_POLL needs Linux")
}

// CRROptions are the socket options of a crr connection.
type CRROptions struct {
	Local  *net.TCPAddr
	SndBuf int
	RcvBuf int
	TOS    int
}

func dialCRR(addr *net.TCPAddr, o CRROptions, busy bool) (*endpoint, error) {
	c, err := net.DialTCP("tcp", o.Local, addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetNoDelay(true)
	_ = c.SetLinger(0)
	if o.SndBuf > 0 {
		_ = c.SetWriteBuffer(o.SndBuf)
	}
	if o.RcvBuf > 0 {
		_ = c.SetReadBuffer(o.RcvBuf)
	}
	return &endpoint{conn: c, stream: true, busy: busy, own: true}, nil
}

// waitRaw and releaseRawSlot: raw system calls are Linux's.
func (e *endpoint) waitRaw(int)     {}
func (e *endpoint) releaseRawSlot() {}
