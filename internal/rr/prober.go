package rr

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// Modes, as spec names them.
const (
	ModeUDP = "udp"
	ModeTCP = "tcp"
	ModeCRR = "crr"
)

// Adaptive timeout of a UDP request: the largest of minTimeout, three
// control round trips and four times the largest RTT seen so far.
const (
	minTimeout    = 200 * time.Millisecond
	streamTimeout = 30 * time.Second // a TCP response: the stream is reliable, only a dead path stalls it
	warmup        = 16               // transactions before the first point, not counted
	ringSize      = 1 << 16          // requests in flight, isochronous UDP
)

// ProberConfig configures a client's probing.
type ProberConfig struct {
	Mode     string // ModeUDP, ModeTCP or ModeCRR
	BusyPoll bool   // spin on the socket instead of blocking
	// Interval is the gap between requests: 0 sends each request as the
	// previous response arrives; otherwise requests leave on an
	// isochronous schedule (internal/pace), and on UDP they do not wait
	// for the responses.
	Interval time.Duration
	// Timeout is how long a UDP response may take before its request
	// counts as lost; 0 adapts it (see minTimeout).
	Timeout    time.Duration
	ControlRTT time.Duration
	// MaxRequest and MaxResponse bound the messages.
	MaxRequest, MaxResponse int
	// NoWarmup skips the uncounted transactions before the first point.
	NoWarmup bool
	// OnSample, if set, is told of every counted transaction as it is
	// recorded, on the prober's goroutine, so that a caller can draw the
	// RTT over time (rrul's latency plot); it must return at once.
	// Back-to-back UDP transactions are recorded in batches of up to 16
	// spanning at most 50 ms (sendstamps.go); Sample.Done is when each
	// completed.
	OnSample func(Sample)

	// For crr: the server's address, the bytes each connection sends
	// before its request (the data hello), and the socket options.
	Addr  *net.TCPAddr
	Hello []byte
	CRR   CRROptions
}

// Sample is one completed transaction, for ProberConfig.OnSample: the
// index of its point (a plan, or a phase), when its response arrived and
// its RTT (T4 − T1).
type Sample struct {
	Point int
	Done  time.Time
	RTT   time.Duration
}

// Plan is one point of a run: Count transactions, or as many as fit in
// Duration (whichever ends first when both are set).
type Plan struct {
	Label             string
	Request, Response int
	Count             int64
	Duration          time.Duration
}

// Prober is the client's side of a request-response test. Run and
// RunPhased execute on the calling goroutine, and crr connections are
// opened from it, so that a caller on a thread in a network namespace
// keeps them there.
type Prober struct {
	cfg      ProberConfig
	e        *endpoint // nil for crr
	rd       *reader
	buf      []byte
	stop     atomic.Bool
	stopCh   chan struct{}
	stopOnce sync.Once

	seq        uint64
	maxRTT     time.Duration
	kernelTS   bool
	sendStamps bool
	busySocket string
	lostSeq    map[uint64]*accumulator // requests counted lost, by sequence number
	// stamped holds lockstep UDP transactions until their send stamps
	// are read (sendstamps.go); nil when there are none to read.
	stamped *sendStampBatch
}

// NewProber prepares a prober on the test's UDP socket or TCP connection;
// conn is nil for crr.
func NewProber(conn syscall.Conn, cfg ProberConfig) (*Prober, error) {
	switch cfg.Mode {
	case ModeUDP, ModeTCP, ModeCRR:
	default:
		return nil, fmt.Errorf("rr: mode %q", cfg.Mode)
	}
	cfg.MaxRequest = max(cfg.MaxRequest, HeaderLen)
	cfg.MaxResponse = max(cfg.MaxResponse, HeaderLen)
	p := &Prober{cfg: cfg, stopCh: make(chan struct{}), lostSeq: map[uint64]*accumulator{}}
	p.buf = make([]byte, len(cfg.Hello)+cfg.MaxRequest)
	copy(p.buf, cfg.Hello)
	if cfg.Mode == ModeCRR {
		if cfg.Addr == nil {
			return nil, errors.New("rr: crr needs the server's address")
		}
		return p, nil
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	// Send stamps need one request in flight at a time (lockstep): the
	// error queue's stamps are matched to the transaction by order.
	lockstep := !(cfg.Mode == ModeUDP && cfg.Interval > 0)
	e, err := newEndpoint(conn, cfg.Mode == ModeTCP, cfg.BusyPoll, lockstep)
	if err != nil {
		return nil, err
	}
	if lockstep {
		e.waitRaw(0) // a client's: it may wait raw on the process's last P
	} else {
		// Isochronous UDP: a reader goroutine waits while the sender's
		// keeps its schedule, and must not hold the P the sender needs.
		e.releaseRawSlot()
	}
	p.e = e
	p.rd = newReader(e, cfg.MaxResponse)
	p.kernelTS = e.kernelTimestamps()
	p.sendStamps = e.sendStamps()
	if p.sendStamps && !e.stream {
		p.stamped = newSendStampBatch(e.sendStampBatch())
	}
	if cfg.BusyPoll {
		p.busySocket = busyPollNote(e)
	}
	return p, nil
}

func busyPollNote(e *endpoint) string {
	if err := e.setBusyPoll(busyPollUsec); err != nil {
		return "SO_BUSY_POLL refused (" + err.Error() + "); spinning in user space only"
	}
	return "SO_BUSY_POLL " + strconv.Itoa(busyPollUsec) + " µs"
}

// Stop ends a run early, from any goroutine: the transaction in flight
// is abandoned and not counted.
func (p *Prober) Stop() {
	p.stop.Store(true)
	p.stopOnce.Do(func() { close(p.stopCh) })
}

// Close releases the socket: a TCP connection goes back to Go (the
// caller closes it); a UDP socket, which NewProber took out of Go's
// poller, is closed (see newEndpoint).
func (p *Prober) Close() {
	if p.e != nil {
		p.e.release()
	}
}

// Outcome is what a run measured.
type Outcome struct {
	accs []*accumulator
	// Timestamps says how the client's times were taken.
	Timestamps string
	// BusyPollSocket says whether SO_BUSY_POLL was granted (busy polling).
	BusyPollSocket string
}

// Points reports each point; offsetNs (the server's clock minus the
// client's) corrects the one-way delays when haveOffset.
func (o *Outcome) Points(offsetNs int64, haveOffset bool) []result.RRPoint {
	out := make([]result.RRPoint, 0, len(o.accs))
	for _, a := range o.accs {
		out = append(out, a.point(offsetNs, haveOffset))
	}
	return out
}

// BestExchange is the transaction with the smallest network RTT, as an
// NTP-style sample for stats.EstimateOffset.
func (o *Outcome) BestExchange() (stats.OffsetSample, bool) {
	var best stats.OffsetSample
	bestRTT := int64(-1)
	for _, a := range o.accs {
		if a.bestRTT >= 0 && (bestRTT < 0 || a.bestRTT < bestRTT) {
			best, bestRTT = a.best, a.bestRTT
		}
	}
	return best, bestRTT >= 0
}

// selector picks, before each transaction, the point it belongs to, or
// -1 when the run is over.
type selector interface{ next(now time.Time) int }

type planSelector struct {
	plans []Plan
	i     int
	start time.Time
	sent  int64
}

func (s *planSelector) next(now time.Time) int {
	for s.i < len(s.plans) {
		p := s.plans[s.i]
		if s.sent == 0 {
			s.start = now
		}
		if s.sent > 0 && (p.Count > 0 && s.sent >= p.Count || p.Duration > 0 && now.Sub(s.start) >= p.Duration) {
			s.i++
			s.sent = 0
			continue
		}
		s.sent++
		return s.i
	}
	return -1
}

type phaseSelector struct{ phase func() int }

func (s phaseSelector) next(time.Time) int { return s.phase() }

// Run runs the plans in order. It returns what was measured, and an
// error if the data path failed (what was measured until then is kept).
func (p *Prober) Run(plans []Plan) (*Outcome, error) {
	accs := make([]*accumulator, len(plans))
	for i, pl := range plans {
		accs[i] = newAccumulator(pl.Label, pl.Request, pl.Response)
		accs[i].index, accs[i].onSample = i, p.cfg.OnSample
	}
	return p.run(&planSelector{plans: plans}, accs)
}

// RunPhased runs one request size in phases, for latency under load:
// before each transaction phase() names the phase (an index into labels)
// or returns -1 to end the run.
func (p *Prober) RunPhased(request, response int, labels []string, phase func() int) (*Outcome, error) {
	accs := make([]*accumulator, len(labels))
	for i, l := range labels {
		accs[i] = newAccumulator(l, request, response)
		accs[i].index, accs[i].onSample = i, p.cfg.OnSample
	}
	return p.run(phaseSelector{phase}, accs)
}

func (p *Prober) run(sel selector, accs []*accumulator) (*Outcome, error) {
	runtime.LockOSThread() // as the reflector's loop (reflector.go)
	defer runtime.UnlockOSThread()
	out := &Outcome{accs: accs, BusyPollSocket: p.busySocket}
	var err error
	if !p.cfg.NoWarmup && len(accs) > 0 {
		err = p.warmup(accs[0].req, accs[0].resp)
	}
	p.recordStamped()
	if err == nil {
		if p.cfg.Mode == ModeUDP && p.cfg.Interval > 0 {
			err = p.pipelined(sel, accs)
		} else {
			err = p.lockstep(sel, accs)
		}
	}
	p.recordStamped()
	out.Timestamps = "client T1: user-space before the send; T4: user-space after the read; RTT on the monotonic clock"
	if p.kernelTS {
		out.Timestamps += "; the response's kernel receive time (SO_TIMESTAMPING, software) beside T4: client time, removed from the network RTT and the backward OWD"
	}
	if p.sendStamps {
		out.Timestamps += "; the request's kernel send time (SO_TIMESTAMPING, software) beside T1: the client's send share, removed from the network RTT and the forward OWD; where the NIC stamps both the request's send and the response's arrival in hardware, the network RTT is between those two less the server's time"
	}
	if p.cfg.Mode == ModeCRR {
		out.Timestamps += "; crr: T1 is before the connect, so RTT and network RTT include the TCP handshake"
	}
	return out, err
}

func (p *Prober) warmup(req, resp int) error {
	n := warmup
	if p.cfg.Mode == ModeCRR {
		n = 4
	}
	scratch := newAccumulator("", req, resp)
	deadline := time.Now().Add(time.Second)
	for i := 0; i < n && !p.stop.Load() && time.Now().Before(deadline); i++ {
		if err := p.transaction(scratch, nil, min(time.Second, p.timeout())); err != nil {
			return err
		}
	}
	p.lostSeq = map[uint64]*accumulator{}
	return nil
}

func (p *Prober) timeout() time.Duration {
	if p.cfg.Timeout > 0 {
		return p.cfg.Timeout
	}
	return max(minTimeout, 3*p.cfg.ControlRTT, 4*p.maxRTT)
}

// lockstep sends each request once the previous transaction is over: at
// once, or at its slot of the isochronous schedule.
func (p *Prober) lockstep(sel selector, accs []*accumulator) error {
	var pacer *pace.Pacer
	cur := -1
	finishPoint := func() {
		if pacer != nil && cur >= 0 {
			sp := pacer.Spacing()
			accs[cur].spacing = &sp
		}
	}
	defer finishPoint()
	consecutiveErrs := 0
	for !p.stop.Load() {
		i := sel.next(time.Now())
		if i < 0 || i >= len(accs) {
			return nil
		}
		if i != cur {
			finishPoint()
			cur = i
			if p.cfg.Interval > 0 {
				pacer = pace.New(pace.ForSpacing(p.cfg.Interval))
				pacer.Start(time.Now())
			}
		}
		if pacer != nil {
			if _, ok := pacer.Wait(p.stopCh); !ok {
				return nil
			}
		}
		err := p.transaction(accs[i], pacer, p.timeout())
		switch {
		case err == nil:
			consecutiveErrs = 0
		case isTransient(err) && consecutiveErrs < 100:
			consecutiveErrs++
			time.Sleep(time.Millisecond) // a refused connect: don't spin
		default:
			return err
		}
	}
	return nil
}

// transientError is a crr connection that failed; the run goes on.
type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }

// isTransient says whether err is a transientError. A function of its
// own so that the target errors.As needs escapes only here, on an
// error: declared in lockstep's loop it was a heap object a transaction.
func isTransient(err error) bool {
	var te transientError
	return errors.As(err, &te)
}

// transaction runs one request and its response, in lockstep.
func (p *Prober) transaction(acc *accumulator, pacer *pace.Pacer, timeout time.Duration) error {
	e, rd := p.e, p.rd
	seq := p.seq
	p.seq++
	h := Header{Kind: KindRequest, Length: uint32(acc.req), Response: uint32(acc.resp), Seq: seq}
	msg := p.buf[len(p.cfg.Hello) : len(p.cfg.Hello)+acc.req]
	t1 := time.Now()
	if p.cfg.Mode == ModeCRR {
		c, err := dialCRR(p.cfg.Addr, p.cfg.CRR, p.cfg.BusyPoll)
		if err != nil {
			acc.sent++
			acc.errors++
			if acc.first.IsZero() {
				acc.first = t1
			}
			return transientError{fmt.Errorf("crr connection: %w", err)}
		}
		defer c.release()
		e = c
		p.kernelTS = c.kernelTimestamps()
		rd = p.crrReader(c)
		msg = p.buf[:len(p.cfg.Hello)+acc.req]
	}
	h.T1 = t1.UnixNano()
	h.Put(p.buf[len(p.cfg.Hello):])
	if pacer != nil {
		pacer.Sent(t1)
	}
	if acc.first.IsZero() {
		acc.first = t1
	}
	acc.sent++
	// The client's send share runs from T1 (after the connect on crr,
	// whose handshake is the network's) to the send's return.
	sendStart := t1
	if p.cfg.Mode == ModeCRR {
		sendStart = time.Now()
	}
	err := e.send(msg)
	sendNs := int64(time.Since(sendStart))
	if err != nil {
		if e.stream {
			if p.cfg.Mode == ModeCRR {
				acc.errors++
				return transientError{err}
			}
			return fmt.Errorf("sending a request: %w", err)
		}
		acc.errors++
		return nil
	}
	if e.stream {
		timeout = streamTimeout
	}
	deadline := t1.Add(timeout)
	for {
		wait := time.Until(deadline)
		if wait <= 0 {
			if e.stream {
				return fmt.Errorf("no response within %v", timeout)
			}
			acc.lost++
			if len(p.lostSeq) < 4096 {
				p.lostSeq[seq] = acc
			}
			return nil
		}
		_, rh, _, err := rd.next(min(wait, pollSlice))
		t4 := time.Now()
		switch {
		case errors.Is(err, errTimeout):
			if p.stop.Load() {
				acc.sent-- // abandoned, not lost
				return nil
			}
			continue
		case err != nil && !e.stream:
			continue // not a response of ours
		case err != nil && p.cfg.Mode == ModeCRR:
			acc.errors++
			return transientError{err}
		case err != nil:
			return fmt.Errorf("reading a response: %w", err)
		}
		if rh.Kind != KindResponse {
			continue
		}
		if rh.Seq != seq {
			if a, ok := p.lostSeq[rh.Seq]; ok {
				a.late++
				delete(p.lostSeq, rh.Seq)
			}
			continue
		}
		s := sample{t1: h.T1, t2: rh.T2, t3: rh.T3, t4: t4.UnixNano(), rx: rd.lastTS, rxHW: e.receivedHW(),
			sendNs: sendNs, rtt: t4.Sub(t1), done: t4}
		p.maxRTT = max(p.maxRTT, t4.Sub(t1))
		// The send stamps are read after T4: the system call is outside the RTT.
		switch {
		case p.stamped != nil: // lockstep UDP; crr has none
			if p.stamped.add(acc, s, e.lastSendID()) {
				p.recordStamped()
			}
			return nil
		case e.sendStamps():
			sent := e.sentStamps()
			s.tx, s.txHW = sent.sw, sent.hw
		}
		acc.add(s)
		return nil
	}
}

// recordStamped reads the send stamps of the transactions held for them
// and records those transactions.
func (p *Prober) recordStamped() {
	if p.stamped != nil {
		p.stamped.flush(p.e.readSendStamps)
	}
}

func (p *Prober) crrReader(e *endpoint) *reader {
	if p.rd == nil {
		p.rd = newReader(e, p.cfg.MaxResponse)
	}
	p.rd.e, p.rd.start, p.rd.end = e, 0, 0
	return p.rd
}

// slot is a request in flight on the isochronous UDP schedule.
type slot struct {
	seq      uint64
	t1       time.Time
	sendNs   int64 // how long the send took, from just before it to its return
	acc      *accumulator
	answered bool
}

// pipelined sends UDP requests on the isochronous schedule without
// waiting for the responses, which a second goroutine reads: a late or
// lost response delays nothing, and each request's RTT is its own.
func (p *Prober) pipelined(sel selector, accs []*accumulator) error {
	var mu sync.Mutex
	ring := make([]slot, ringSize)
	var outstanding int64
	readerDone := make(chan struct{})
	var quit atomic.Bool
	var readErr error
	tmo := p.timeout() // fixed for the run: the reader and the sender share it
	go func() {
		defer close(readerDone)
		for !quit.Load() {
			_, rh, _, err := p.rd.next(pollSlice)
			t4 := time.Now()
			if err != nil {
				if !errors.Is(err, errTimeout) && !errors.Is(err, ErrShort) && !errors.Is(err, ErrNotOurs) && !errors.Is(err, ErrBadLength) && !errors.Is(err, ErrBadVersion) {
					readErr = err
					return
				}
				continue
			}
			if rh.Kind != KindResponse {
				continue
			}
			mu.Lock()
			s := &ring[rh.Seq%ringSize]
			if s.acc != nil && s.seq == rh.Seq && !s.answered {
				s.answered = true
				outstanding--
				rtt := t4.Sub(s.t1)
				if rtt > tmo {
					s.acc.late++
				} else {
					s.acc.add(sample{t1: s.t1.UnixNano(), t2: rh.T2, t3: rh.T3, t4: t4.UnixNano(), rx: p.rd.lastTS, sendNs: s.sendNs, rtt: rtt, done: t4})
					p.maxRTT = max(p.maxRTT, rtt)
				}
			}
			mu.Unlock()
		}
	}()

	pacer := pace.New(pace.ForSpacing(p.cfg.Interval))
	pacer.Start(time.Now())
	var lastSend time.Time
	cur := -1
	var sendErr error
	for !p.stop.Load() {
		i := sel.next(time.Now())
		if i < 0 || i >= len(accs) {
			break
		}
		if _, ok := pacer.Wait(p.stopCh); !ok {
			break
		}
		acc := accs[i]
		if i != cur {
			if cur >= 0 {
				sp := pacer.Spacing()
				accs[cur].spacing = &sp
				pacer.Start(time.Now())
			}
			cur = i
		}
		seq := p.seq
		p.seq++
		h := Header{Kind: KindRequest, Length: uint32(acc.req), Response: uint32(acc.resp), Seq: seq}
		t1 := time.Now()
		h.T1 = t1.UnixNano()
		h.Put(p.buf)
		mu.Lock()
		s := &ring[seq%ringSize]
		if s.acc != nil && !s.answered {
			outstanding-- // overwritten unanswered: it stays lost
		}
		*s = slot{seq: seq, t1: t1, acc: acc}
		outstanding++
		if acc.first.IsZero() {
			acc.first = t1
		}
		acc.sent++
		mu.Unlock()
		pacer.Sent(t1)
		lastSend = t1
		if err := p.e.send(p.buf[:acc.req]); err != nil {
			sendErr = fmt.Errorf("sending a request: %w", err)
			break
		}
		sendNs := int64(time.Since(t1)) // T1 to the send's return: the client's own share
		mu.Lock()
		if s.seq == seq && s.acc == acc {
			s.sendNs = sendNs
		}
		mu.Unlock()
	}
	if cur >= 0 {
		sp := pacer.Spacing()
		accs[cur].spacing = &sp
	}
	// Wait for the responses still in flight, up to the timeout.
	for !lastSend.IsZero() && time.Since(lastSend) < tmo && !p.stop.Load() {
		mu.Lock()
		n := outstanding
		mu.Unlock()
		if n <= 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	quit.Store(true)
	<-readerDone
	mu.Lock()
	defer mu.Unlock()
	for _, a := range accs {
		a.lost = max(0, a.sent-a.completed)
	}
	if sendErr != nil {
		return sendErr
	}
	return readErr
}
