package rr

import (
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// pollSlice bounds each blocking wait, so that loops notice a stop.
const pollSlice = 100 * time.Millisecond

// busyPollUsec is what SO_BUSY_POLL asks for with --busy-poll.
const busyPollUsec = 50

// ReflectorConfig bounds what a server answers.
type ReflectorConfig struct {
	MaxRequest  int  // the largest request read
	MaxResponse int  // the largest response sent
	BusyPoll    bool // spin on the socket instead of blocking
}

// Reflector answers a test's requests: on one UDP socket, one TCP
// connection, or a connection per transaction (crr). It stamps T2 as a
// request arrives (the kernel's receive time where there is one) and T3
// as it answers, and keeps the server's figures.
type Reflector struct {
	cfg  ReflectorConfig
	stop atomic.Bool

	mu          sync.Mutex
	served      int64
	refused     int64
	conns       int64
	server      *hdrhistogram.Histogram // T3 − T2, ns
	kernelTS    bool
	userTS      bool
	busySocket  string
	wg          sync.WaitGroup
	firstErr    error
	stopped     chan struct{}
	stoppedOnce sync.Once
}

// NewReflector returns a reflector.
func NewReflector(cfg ReflectorConfig) *Reflector {
	return &Reflector{cfg: cfg, server: newHist(otherDigits), stopped: make(chan struct{})}
}

// Stop ends every loop within pollSlice; Wait waits for them.
func (r *Reflector) Stop() {
	r.stop.Store(true)
	r.stoppedOnce.Do(func() { close(r.stopped) })
}

// Wait blocks until every loop started with Go has returned.
func (r *Reflector) Wait() { r.wg.Wait() }

// Go runs fn (ServeUDP, ServeTCP, ServeCRR) on its own goroutine, which
// Wait waits for.
func (r *Reflector) Go(fn func() error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := fn(); err != nil {
			r.mu.Lock()
			if r.firstErr == nil {
				r.firstErr = err
			}
			r.mu.Unlock()
		}
	}()
}

// ServeUDP answers the datagrams on a connected UDP socket until Stop.
func (r *Reflector) ServeUDP(c *net.UDPConn) error {
	e, err := newEndpoint(c, false, r.cfg.BusyPoll)
	if err != nil {
		return err
	}
	defer e.release()
	return r.serve(e, false)
}

// ServeTCP answers the requests on a TCP connection until Stop or until
// the client closes it.
func (r *Reflector) ServeTCP(c *net.TCPConn) error {
	_ = c.SetNoDelay(true)
	e, err := newEndpoint(c, true, r.cfg.BusyPoll)
	if err != nil {
		return err
	}
	defer e.release()
	err = r.serve(e, false)
	if errors.Is(err, errClosed) {
		return nil
	}
	return err
}

// ServeCRR answers the one request of a crr connection, then closes it.
func (r *Reflector) ServeCRR(c *net.TCPConn) error {
	defer c.Close()
	_ = c.SetNoDelay(true)
	r.mu.Lock()
	r.conns++
	r.mu.Unlock()
	// No busy polling here: the request comes with the connection, and
	// a spinning handler would only take the CPU the next accept needs.
	e, err := newEndpoint(c, true, false)
	if err != nil {
		return err
	}
	defer e.release()
	err = r.serve(e, true)
	if errors.Is(err, errClosed) || errors.Is(err, errTimeout) {
		return nil // the client gave up on this one; its count says so
	}
	return err
}

func (r *Reflector) serve(e *endpoint, once bool) error {
	if r.cfg.BusyPoll && e.busy {
		r.noteBusyPoll(e)
	}
	// The loop blocks in system calls on its thread: keep the thread, so
	// that each wake-up resumes the loop at once instead of queueing it
	// for another thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rd := newReader(e, max(r.cfg.MaxRequest, HeaderLen))
	resp := make([]byte, max(r.cfg.MaxResponse, HeaderLen))
	hist := newHist(otherDigits)
	var served, refused int64
	var kernel, user bool
	defer func() {
		r.mu.Lock()
		r.served += served
		r.refused += refused
		r.server.Merge(hist)
		r.kernelTS = r.kernelTS || kernel
		r.userTS = r.userTS || user
		r.mu.Unlock()
	}()
	wait := pollSlice
	if once {
		wait = 10 * time.Second // one request, due at once
	}
	for !r.stop.Load() {
		_, h, t2, err := rd.next(wait)
		switch {
		case errors.Is(err, errTimeout):
			if once {
				return err
			}
			continue
		case err != nil && !e.stream:
			if !errors.Is(err, ErrShort) && !errors.Is(err, ErrNotOurs) {
				refused++ // a stray hello is neither
			}
			continue
		case err != nil:
			return err
		}
		if t2 == 0 {
			t2 = time.Now().UnixNano()
			user = true
		} else {
			kernel = true
		}
		if h.Kind != KindRequest || h.Response < HeaderLen || int(h.Response) > len(resp) {
			refused++
			if e.stream {
				return ErrBadLength
			}
			continue
		}
		out := Header{Kind: KindResponse, Length: h.Response, Seq: h.Seq, T1: h.T1, T2: t2}
		out.T3 = time.Now().UnixNano()
		out.Put(resp)
		if err := e.send(resp[:h.Response]); err != nil {
			return err
		}
		served++
		record(hist, out.T3-t2)
		if once {
			return nil
		}
	}
	return nil
}

func (r *Reflector) noteBusyPoll(e *endpoint) {
	msg := "SO_BUSY_POLL " + strconv.Itoa(busyPollUsec) + " µs"
	if err := e.setBusyPoll(busyPollUsec); err != nil {
		msg = "SO_BUSY_POLL refused (" + err.Error() + "); spinning in user space only"
	}
	r.mu.Lock()
	if r.busySocket == "" {
		r.busySocket = msg
	}
	r.mu.Unlock()
}

// Err is the first error a loop started with Go returned.
func (r *Reflector) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}

// Report is the server's view, once the loops are done.
func (r *Reflector) Report(mode string) *result.RR {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &result.RR{
		Mode: mode, Served: r.served, Connections: r.conns, Refused: r.refused,
		BusyPoll: r.cfg.BusyPoll, BusyPollSocket: r.busySocket,
	}
	if r.server.TotalCount() > 0 {
		p := stats.Summarize(r.server, 1)
		out.ServerTime = &p
	}
	switch {
	case r.kernelTS && r.userTS:
		out.Timestamps = "server T2: kernel receive time where the socket gave one, else user-space; T3: user-space"
	case r.kernelTS:
		out.Timestamps = "server T2: kernel receive time (SO_TIMESTAMPNS); T3: user-space before the send"
	case r.userTS:
		out.Timestamps = "server T2: user-space after the read; T3: user-space before the send"
	}
	return out
}
