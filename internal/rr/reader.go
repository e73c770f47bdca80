package rr

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// errClosed is a TCP peer's close between messages.
var errClosed = errors.New("rr: connection closed")

// reader turns an endpoint's reads into whole messages: a datagram each
// on UDP, the header's length on TCP.
type reader struct {
	e          *endpoint
	max        int // the largest message accepted
	buf        []byte
	start, end int   // unread bytes (TCP)
	ts         int64 // kernel receive time of the current message's first read
	// lastTS is the kernel receive time of the last read that completed
	// the message returned by next (0 if unknown): the client's own
	// scheduling delay is the user-space time after next minus this.
	lastTS int64
	// deadline, when set, bounds the wait for a whole message, however
	// its bytes trickle in; stop, when set, ends a wait between reads.
	deadline time.Time
	stop     *atomic.Bool
}

// reset points the reader at e with nothing buffered.
func (r *reader) reset(e *endpoint, deadline time.Time, stop *atomic.Bool) {
	r.e, r.start, r.end, r.deadline, r.stop = e, 0, 0, deadline, stop
}

// wait is how long the next read may block: timeout, cut to what is left
// before the deadline; errTimeout once it has passed or on a stop.
func (r *reader) wait(timeout time.Duration) (time.Duration, error) {
	if r.stop != nil && r.stop.Load() {
		return 0, errTimeout
	}
	if r.deadline.IsZero() {
		return timeout, nil
	}
	left := time.Until(r.deadline)
	if left <= 0 {
		return 0, errTimeout
	}
	return min(timeout, left), nil
}

func newReader(e *endpoint, max int) *reader {
	n := max + 1 // a UDP datagram one byte too long is told apart
	if e.stream {
		n = max + 64<<10
	}
	return &reader{e: e, max: max, buf: make([]byte, n)}
}

// next returns the next whole message, valid until the next call, with
// the kernel's receive time of its first bytes (0 if unknown). It waits
// at most timeout for each read, and no longer than the reader's deadline. A UDP datagram that is not a message is
// returned with its parse error, and the next call goes on; on TCP a bad
// header is fatal, since the stream cannot be resynchronised.
func (r *reader) next(timeout time.Duration) ([]byte, Header, int64, error) {
	if !r.e.stream {
		wait, err := r.wait(timeout)
		if err != nil {
			return nil, Header{}, 0, err
		}
		n, ts, err := r.e.recv(r.buf, wait)
		if err != nil {
			return nil, Header{}, 0, err
		}
		r.lastTS = ts
		msg := r.buf[:n]
		h, err := Parse(msg)
		if err == nil && (int(h.Length) != n || n > r.max) {
			err = fmt.Errorf("%w: %d bytes announced, %d received (limit %d)", ErrBadLength, h.Length, n, r.max)
		}
		return msg, h, ts, err
	}
	for {
		if have := r.end - r.start; have >= HeaderLen {
			h, err := Parse(r.buf[r.start:r.end])
			if err != nil {
				return nil, h, 0, err
			}
			if int(h.Length) > r.max {
				return nil, h, 0, fmt.Errorf("%w: %d bytes announced, limit %d", ErrBadLength, h.Length, r.max)
			}
			if have >= int(h.Length) {
				msg := r.buf[r.start : r.start+int(h.Length)]
				r.start += int(h.Length)
				ts := r.ts
				if r.start == r.end {
					r.start, r.end = 0, 0
				}
				return msg, h, ts, nil
			}
		}
		if r.start > 0 && len(r.buf)-r.end < r.max {
			r.end = copy(r.buf, r.buf[r.start:r.end])
			r.start = 0
		}
		wait, err := r.wait(timeout)
		if err != nil {
			return nil, Header{}, 0, err
		}
		n, ts, err := r.e.recv(r.buf[r.end:], wait)
		if err != nil {
			return nil, Header{}, 0, err
		}
		if n == 0 {
			return nil, Header{}, 0, errClosed
		}
		if r.end == r.start {
			r.ts = ts
		}
		r.lastTS = ts
		r.end += n
	}
}
