package udpflow

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/yield"
)

// MinSlot is the shortest gap the rate pacer sleeps between sends. A
// rate whose datagrams are closer than this is sent in bursts that each
// fill one slot: every wake-up costs a few microseconds of CPU (two
// context switches and the sleep's system call), so that at 300 Mbit/s
// of 1448-byte datagrams one wake-up per datagram would cost more CPU
// than the sends. 200 µs of data is a smaller burst than iperf3's 1 ms
// pacing timer sends.
const MinSlot = 200 * time.Microsecond

// Budget hands a sender the bytes it may still send (-n): Take reserves up
// to want and returns how many (0: spent), Return gives back what was not
// sent. nil is no limit.
type Budget interface {
	Take(want int) int
	Return(n int)
}

// SenderConfig describes one sending stream.
type SenderConfig struct {
	Token    [16]byte
	StreamID uint32
	Size     int // datagram payload bytes, header included
	// Pace is the schedule; nil sends as fast as the socket takes them.
	Pace *pace.Config
	GSO  bool
	// Key, when set, signs every datagram (Signer): authentication is on.
	Key []byte
	// RepeatingPayload fills each datagram after its header with
	// spec.RepeatingPattern (--repeating-payload), as iperf3 fills its
	// buffer before writing its header over the start.
	RepeatingPayload bool
	// Frames makes the stream isochronous (--isochronous): frames on
	// their schedule instead of Pace (frame_send.go).
	Frames *isoch.Frames
}

// Sender sends one stream's datagrams, numbered from 0.
type Sender struct {
	cfg   SenderConfig
	conn  *net.UDPConn
	io    batchIO
	pacer *pace.Pacer // spacing mode: each gap held
	rate  *pace.Rate  // rate mode: the average rate held

	sent       atomic.Int64 // datagrams the kernel took
	sendErrors atomic.Int64
	lastNano   atomic.Int64
	stopping   atomic.Bool
	stop       chan struct{}
	stopOnce   sync.Once
	done       chan struct{}
	epoch      time.Time
	errMu      sync.Mutex
	err        error
	schedule   *result.Schedule // set when run ends, paced
	frames     *frameCounts     // an isochronous stream's
	frameBatch atomic.Int64     // the most datagrams an isochronous send carried
}

// NewSender prepares a sender on a connected socket.
func NewSender(conn *net.UDPConn, cfg SenderConfig) (*Sender, error) {
	if cfg.Size < HeaderLen {
		return nil, errors.New("udpflow: datagrams must hold the header")
	}
	if len(cfg.Key) > 0 && cfg.Size < SignedHeaderLen {
		return nil, fmt.Errorf("udpflow: with authentication, datagrams must hold the signed header (%d bytes)", SignedHeaderLen)
	}
	if cfg.Frames != nil {
		if err := cfg.Frames.Check(); err != nil {
			return nil, fmt.Errorf("udpflow: --isochronous: %w", err)
		}
		if need := FrameHeaderLen + min(len(cfg.Key), 1)*MACLen; cfg.Size < need {
			return nil, fmt.Errorf("udpflow: isochronous datagrams must hold the frame fields (%d bytes)", need)
		}
		cfg.Pace = nil // the frames are the schedule
	}
	io, err := newBatchIO(conn, cfg.Size, cfg.GSO)
	if err != nil {
		return nil, err
	}
	s := &Sender{cfg: cfg, conn: conn, io: io, stop: make(chan struct{}), done: make(chan struct{})}
	if cfg.Frames != nil {
		s.frames = &frameCounts{}
	}
	if p := cfg.Pace; p != nil && p.Interval > 0 {
		if p.Spacing {
			s.pacer = pace.New(*p)
		} else {
			s.rate = pace.NewRate(*p)
		}
	} else if p != nil {
		s.pacer = pace.New(*p) // no interval: unpaced, but its spacing is reported
	}
	return s, nil
}

// Start sends until Stop, an error, or the budget (bytes, shared by the
// direction's streams) is spent.
func (s *Sender) Start(epoch time.Time, budget Budget) {
	s.epoch = epoch
	go s.run(budget)
}

func (s *Sender) batchSize() int {
	switch {
	case s.rate != nil:
		return int(s.rate.Rule().Cap)
	case s.cfg.Pace != nil:
		return max(1, s.cfg.Pace.Burst)
	}
	return s.io.maxSendBatch(s.cfg.Size)
}

// run sends on a thread of its own: the pacer's sleeps then wake it, with
// a low timer slack, close to their deadline, and its CPU time is the
// sender's alone. The thread ends with the goroutine.
func (s *Sender) run(budget Budget) {
	defer close(s.done)
	defer s.io.close()
	runtime.LockOSThread()
	if s.cfg.Pace != nil {
		pace.LowTimerSlack()
	}
	cpu0 := threadCPU()
	size := s.cfg.Size
	batch := s.batchSize()
	buf := make([]byte, batch*size)
	signer := NewSigner(s.cfg.Key)
	tmpl := Header{Token: s.cfg.Token, StreamID: s.cfg.StreamID}
	for i := 0; i < batch; i++ {
		if s.cfg.RepeatingPayload {
			spec.RepeatingPattern(buf[i*size:(i+1)*size], 0)
		}
		tmpl.Put(buf[i*size:])
	}
	start := time.Now()
	if s.cfg.Frames != nil {
		s.runFrames(buf, batch, signer, budget, start, cpu0)
		return
	}
	if s.pacer != nil {
		s.pacer.Start(start)
	}
	var slot time.Duration // a send call longer than this is slow
	if s.rate != nil {
		s.rate.Start(start)
		r := s.rate.Rule()
		slot = time.Duration(float64(r.Burst) * r.Gap)
	} else if s.cfg.Pace != nil {
		slot = s.cfg.Pace.Interval
	}
	var seq uint64
	var sends, slow, full int64
	var y yield.Yielder
	yield.Enter(false)
	defer yield.Leave(false)
	for !s.stopping.Load() {
		n := batch
		if s.rate != nil {
			k, ok := s.rate.Next(s.stop, batch)
			if !ok {
				break
			}
			n = k
		}
		if budget != nil {
			got := budget.Take(n * size)
			if got == 0 {
				break
			}
			// Whole datagrams only; a remainder smaller than one datagram
			// still goes out as one, as iperf sends whole blocks.
			n = max(1, got/size)
			budget.Return(max(0, got-n*size))
		}
		if s.pacer != nil {
			if _, ok := s.pacer.Wait(s.stop); !ok {
				if budget != nil {
					budget.Return(n * size)
				}
				break
			}
		}
		now := time.Now()
		ns := now.UnixNano()
		for i := 0; i < n; i++ {
			PutSeqTime(buf[i*size:], seq+uint64(i), ns)
			if signer != nil {
				signer.Sign(buf[i*size:])
			}
		}
		k, err := s.io.send(buf, size, n)
		y.At(ns) // after the send: its datagrams carry ns
		sends++
		if slot > 0 && time.Since(now) > slot {
			slow++
		}
		if s.pacer != nil {
			s.pacer.Sent(now)
		}
		if s.rate != nil {
			s.rate.Sent(k)
		}
		if k > 0 {
			seq += uint64(k)
			s.sent.Add(int64(k))
			s.lastNano.Store(int64(time.Since(s.epoch)))
		}
		if k < n && budget != nil {
			budget.Return((n - k) * size)
		}
		if err != nil {
			if transientSendError(err) {
				s.sendErrors.Add(1)
				if !errors.Is(err, syscall.ECONNREFUSED) {
					full++
				}
				continue
			}
			if !s.stopping.Load() {
				s.setErr(err)
			}
			break
		}
	}
	if s.cfg.Pace == nil {
		return
	}
	wall := time.Since(start)
	sc := &result.Schedule{
		CPUPercent: cpuPercent(cpu0, threadCPU(), wall),
		BufferFull: full, Sends: sends, SlowSends: slow, Spin: s.cfg.Pace.Spin,
	}
	if s.cfg.Pace.Interval > 0 && wall > 0 {
		sc.RequestedBps = float64(s.cfg.Pace.Burst*size*8) / s.cfg.Pace.Interval.Seconds()
		sc.SentBps = float64(s.sent.Load()*int64(size)*8) / wall.Seconds()
	}
	switch {
	case s.rate != nil:
		sc.WrittenOff = s.rate.WrittenOff()
	case s.pacer != nil:
		sc.WrittenOff = s.pacer.Skipped() * int64(max(1, s.cfg.Pace.Burst))
	}
	sc.Limit = scheduleLimit(sc)
	s.schedule = sc
}

// runFrames is run's loop for an isochronous stream (frameSender), on
// the same thread; its schedule is reported as a paced sender's is.
func (s *Sender) runFrames(buf []byte, batch int, signer *Signer, budget Budget, start time.Time, cpu0 time.Duration) {
	pace.LowTimerSlack()
	fs := &frameSender{
		f: *s.cfg.Frames, size: s.cfg.Size, batch: batch, clock: realClock{pace.NewSleeper(start)},
		sizer: isoch.NewSizer(*s.cfg.Frames), budget: budget, signer: signer, stop: s.stop,
		send:     func(b []byte, n int) (int, error) { return s.io.send(b, s.cfg.Size, n) },
		stopping: s.stopping.Load, counts: s.frames, sendErrs: &s.sendErrors,
		sentNow: func(k int) {
			s.sent.Add(int64(k))
			s.lastNano.Store(int64(time.Since(s.epoch)))
		},
	}
	var y yield.Yielder
	yield.Enter(false)
	defer yield.Leave(false)
	send := fs.send
	fs.send = func(b []byte, n int) (int, error) {
		k, err := send(b, n)
		y.At(time.Now().UnixNano())
		return k, err
	}
	if err := fs.run(buf, start); err != nil && !s.stopping.Load() {
		s.setErr(err)
	}
	s.frameBatch.Store(int64(fs.maxBatch))
	wall := time.Since(start)
	s.schedule = &result.Schedule{
		CPUPercent: cpuPercent(cpu0, threadCPU(), wall), BufferFull: fs.full, Sends: fs.sends,
	}
}

// TakeRowLateMaxMs is an isochronous sender's latest frame start since
// the last call, for an interval row; 0 for any other sender.
func (s *Sender) TakeRowLateMaxMs() float64 {
	if s.frames == nil {
		return 0
	}
	return s.frames.TakeRowLateMaxMs()
}

// Frames is an isochronous sender's frame counts so far; nil for any
// other sender.
func (s *Sender) Frames() *result.Frames {
	if s.frames == nil {
		return nil
	}
	f := s.frames.Frames()
	return &f
}

// transientSendError is a send the kernel refused for now: a full queue
// (ENOBUFS), or an ICMP error from an earlier datagram (the receiver's
// port was not yet open). The stream goes on; the count is reported.
func transientSendError(err error) bool {
	return errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EAGAIN)
}

// Stop ends the sender.
func (s *Sender) Stop() {
	s.stopping.Store(true)
	s.stopOnce.Do(func() { close(s.stop) })
}

// Done is closed when the sender has stopped.
func (s *Sender) Done() <-chan struct{} { return s.done }

// Sent is the number of datagrams sent so far.
func (s *Sender) Sent() int64 { return s.sent.Load() }

// SendErrors counts sends the kernel refused.
func (s *Sender) SendErrors() int64 { return s.sendErrors.Load() }

// Bytes is the payload sent so far.
func (s *Sender) Bytes() int64 { return s.sent.Load() * int64(s.cfg.Size) }

// LastByte is when the last datagram left, since the epoch.
func (s *Sender) LastByte() time.Duration { return time.Duration(s.lastNano.Load()) }

// Spacing is how well the pacer kept its schedule; nil when unpaced. Call
// it after Done.
func (s *Sender) Spacing() *result.Spacing {
	var sp result.Spacing
	switch {
	case s.rate != nil:
		sp = s.rate.Spacing()
	case s.pacer != nil:
		sp = s.pacer.Spacing()
	default:
		return nil
	}
	return &sp
}

// Schedule says whether the sender held its rate, and what held it back;
// nil when unpaced. Call it after Done.
func (s *Sender) Schedule() *result.Schedule { return s.schedule }

// Features says what the socket's I/O used.
func (s *Sender) Features() Features { return s.io.features() }

// GSOSegments is the most datagrams one send carried as GSO segments; 0
// when GSO was not used.
func (s *Sender) GSOSegments() int {
	if !s.io.features().GSO {
		return 0
	}
	if s.cfg.Frames != nil { // as many as a frame's sends carried: --ipg sends one at a time
		return int(s.frameBatch.Load())
	}
	return min(s.batchSize(), s.io.maxSendBatch(s.cfg.Size))
}

// Err is the error that ended the sender, if any.
func (s *Sender) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *Sender) setErr(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
}
