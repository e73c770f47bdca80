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
	"github.com/wireperf/wireperf/internal/yield"
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
	// Paced: the requests come on a schedule (--interval), not each
	// on the last response's heels, so a wait is mostly the gap between
	// them, and its first millisecond is not spent raw, holding a P the
	// rest of the server (a load's streams) may need (endpoint.waitRaw).
	Paced bool
}

// Reflector answers a test's requests: on one UDP socket, one TCP
// connection, or a connection per transaction (crr, on a bounded set of
// workers). It stamps T2 as a
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
	turnedAway  int64
	crr         chan *net.TCPConn // a crr test's connections, for the workers
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
// It takes the socket out of Go's poller and closes it when it returns
// (see newEndpoint): the caller may still read its addresses.
func (r *Reflector) ServeUDP(c *net.UDPConn) error {
	enterLoop()
	defer leaveLoop()
	e, err := newEndpoint(c, false, r.cfg.BusyPoll, false)
	if err != nil {
		return err
	}
	defer e.release()
	return r.serve(e)
}

// ServeTCP answers the requests on a TCP connection until Stop or until
// the client closes it.
func (r *Reflector) ServeTCP(c *net.TCPConn) error {
	_ = c.SetNoDelay(true)
	enterLoop()
	defer leaveLoop()
	e, err := newEndpoint(c, true, r.cfg.BusyPoll, false)
	if err != nil {
		return err
	}
	defer e.release()
	err = r.serve(e)
	if errors.Is(err, errClosed) {
		return nil
	}
	return err
}

// A crr test's connections are answered by crrWorkers threads, with
// crrQueue more waiting their turn; OfferCRR closes the rest at once. A
// client opens its crr connections one after another, so this is room to
// spare for a real client, and a cap on what a flood of connections that
// never send a request can take: each worker blocks in a system call on a
// thread of its own.
const (
	crrWorkers = 4
	crrQueue   = 16
)

// StartCRR starts the workers that answer a crr test's connections, one
// transaction each. The request comes right behind the hello, so a
// connection gets wait for its whole request; one that stays silent
// longer is closed. Stop ends the workers.
func (r *Reflector) StartCRR(wait time.Duration) {
	r.crr = make(chan *net.TCPConn, crrQueue)
	for range crrWorkers {
		r.Go(func() error { return r.crrWorker(wait) })
	}
}

// OfferCRR hands a crr connection to the workers, after StartCRR. When
// every worker is busy and the queue is full, or after Stop, it closes
// the connection and reports false.
func (r *Reflector) OfferCRR(c *net.TCPConn) bool {
	if r.stop.Load() {
		_ = c.Close()
		return false
	}
	select {
	case r.crr <- c:
		return true
	default:
		_ = c.Close()
		r.mu.Lock()
		r.turnedAway++
		r.mu.Unlock()
		return false
	}
}

// TurnedAway is how many crr connections OfferCRR closed unanswered.
func (r *Reflector) TurnedAway() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.turnedAway
}

// crrWorker answers crr connections until Stop, on one locked thread and
// with buffers kept from one connection to the next; then it closes what
// is still queued.
func (r *Reflector) crrWorker(wait time.Duration) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := r.newAnswerer()
	defer a.merge()
	for {
		select {
		case c := <-r.crr:
			if err := a.answerCRR(c, wait); err != nil {
				return err
			}
		case <-r.stopped:
			for {
				select {
				case c := <-r.crr:
					_ = c.Close()
				default:
					return nil
				}
			}
		}
	}
}

// answerCRR answers the one request of a crr connection, then closes it.
func (a *answerer) answerCRR(c *net.TCPConn, wait time.Duration) error {
	defer c.Close()
	_ = c.SetNoDelay(true)
	a.conns++
	// No busy polling here: the request comes with the connection, and
	// a spinning handler would only take the CPU the next accept needs.
	e, err := newEndpoint(c, true, false, false)
	if err != nil {
		return err
	}
	defer e.release()
	err = a.answer(e, time.Now().Add(wait))
	if errors.Is(err, errClosed) || errors.Is(err, errTimeout) {
		return nil // the client gave up on this one, or never meant it; its count says so
	}
	return err
}

// answerer is one loop's state: its buffers, kept across the
// connections of a crr worker, and its figures, merged into the
// reflector's when the loop ends.
type answerer struct {
	r            *Reflector
	rd           *reader
	resp         []byte
	hist         *hdrhistogram.Histogram
	served       int64
	refused      int64
	conns        int64
	kernel, user bool
}

func (r *Reflector) newAnswerer() *answerer {
	return &answerer{r: r, resp: make([]byte, max(r.cfg.MaxResponse, HeaderLen)), hist: newHist(otherDigits)}
}

func (a *answerer) merge() {
	r := a.r
	r.mu.Lock()
	r.served += a.served
	r.refused += a.refused
	r.conns += a.conns
	r.server.Merge(a.hist)
	r.kernelTS = r.kernelTS || a.kernel
	r.userTS = r.userTS || a.user
	r.mu.Unlock()
}

func (r *Reflector) serve(e *endpoint) error {
	if r.cfg.BusyPoll && e.busy {
		r.noteBusyPoll(e)
	}
	// The loop blocks in system calls on its thread: keep the thread, so
	// that each wake-up resumes the loop at once instead of queueing it
	// for another thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r.cfg.Paced {
		e.releaseRawSlot()
	}
	a := r.newAnswerer()
	defer a.merge()
	return a.answer(e, time.Time{})
}

// answer answers e's requests until Stop, or, with a deadline (crr), the
// one request that must arrive whole by then.
func (a *answerer) answer(e *endpoint, deadline time.Time) error {
	once := !deadline.IsZero()
	if a.rd == nil || a.rd.e.stream != e.stream {
		a.rd = newReader(e, max(a.r.cfg.MaxRequest, HeaderLen))
	}
	a.rd.reset(e, deadline, &a.r.stop)
	for !a.r.stop.Load() {
		_, h, t2, err := a.rd.next(pollSlice)
		switch {
		case errors.Is(err, errTimeout):
			if once && !time.Now().Before(deadline) {
				return err
			}
			continue
		case err != nil && !e.stream:
			if !errors.Is(err, ErrShort) && !errors.Is(err, ErrNotOurs) {
				a.refused++ // a stray hello is neither
			}
			continue
		case err != nil:
			return err
		}
		if t2 == 0 {
			t2 = time.Now().UnixNano()
			a.user = true
		} else {
			a.kernel = true
		}
		if h.Kind != KindRequest || h.Response < HeaderLen || int(h.Response) > len(a.resp) {
			a.refused++
			if e.stream {
				return ErrBadLength
			}
			continue
		}
		out := Header{Kind: KindResponse, Length: h.Response, Seq: h.Seq, T1: h.T1, T2: t2}
		out.T3 = time.Now().UnixNano()
		out.Put(a.resp)
		if err := e.send(a.resp[:h.Response]); err != nil {
			return err
		}
		a.served++
		record(a.hist, out.T3-t2)
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

// enterLoop counts a test's answering loop among the process's data
// loops as a reader (internal/yield), before its endpoint is made: a
// process with one P (a server pinned to one CPU, or in a container
// with one CPU's quota) then gets a second while the loop runs, so that
// the loop's wait can start raw (endpoint.waitRaw leaves one P to the
// rest of the process). With its one P taken by an ordinary blocking
// read, Go's monitor took the P back from every wait and polled every
// 20 µs while the test ran: about 5,000 wake-ups a second on the
// server's CPU, and 1.2 context switches a transaction instead of one
// (bench/RESULTS.md). The loop keeps its P through its raw waits, asleep
// in the kernel, so the rest of the server runs on the one it had.
func enterLoop() { yield.Enter(true) }

// leaveLoop ends what enterLoop began.
func leaveLoop() { yield.Leave(true) }

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
		out.Timestamps = "server T2: kernel receive time (SO_TIMESTAMPING, software); T3: user-space before the send"
	case r.userTS:
		out.Timestamps = "server T2: user-space after the read; T3: user-space before the send"
	}
	return out
}
