package udpflow

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
	"github.com/wireperf/wireperf/internal/yield"
)

// ReceiverConfig describes one receiving stream.
type ReceiverConfig struct {
	Token         [16]byte
	StreamID      uint32
	Size          int // the largest datagram expected
	GRO           bool
	LateThreshold time.Duration
	// Key, when set, accepts only datagrams signed with it (Signer).
	Key []byte
	// Frames: the stream is isochronous (--isochronous); its datagrams
	// carry frame fields, and the receiver accounts for its frames.
	Frames bool
}

// Receiver accounts one stream's datagrams.
type Receiver struct {
	cfg  ReceiverConfig
	conn *net.UDPConn
	io   batchIO
	sig  *Signer // nil: datagrams are not signed
	m    matcher // this stream's datagrams

	mu    sync.Mutex // guards stats between the read loop and interval cuts
	stats *stats.UDPReceiver
	arr   *arrivals  // arrival histograms, when enabled (arrivals.go)
	fr    *frameAcct // an isochronous stream's frames (frame_recv.go)

	bytes   atomic.Int64
	foreign atomic.Int64 // datagrams of another test, or not ours at all
	forged  atomic.Int64 // this test's token and stream, but no valid MAC
	// drops is the socket's drop count once the read loop has ended
	// (dropsKnown says whether the platform counts it).
	drops      atomic.Uint64
	dropsKnown atomic.Bool
	lastNano   atomic.Int64
	firstNano  atomic.Int64 // 0 until the first datagram
	stopping   atomic.Bool
	done       chan struct{}
	epoch      time.Time
	errMu      sync.Mutex
	err        error
}

// NewReceiver prepares a receiver on a connected socket.
func NewReceiver(conn *net.UDPConn, cfg ReceiverConfig) (*Receiver, error) {
	io, err := newBatchIO(conn, cfg.Size, cfg.GRO)
	if err != nil {
		return nil, err
	}
	src := "user-space"
	if io.features().KernelTimestamps {
		src = "kernel"
	}
	r := &Receiver{
		cfg: cfg, conn: conn, io: io, done: make(chan struct{}), sig: NewSigner(cfg.Key),
		m:     newMatcher(cfg.Token, cfg.StreamID),
		stats: stats.NewUDPReceiver(stats.UDPConfig{LateThreshold: cfg.LateThreshold, TimestampSource: src}),
	}
	if cfg.Frames {
		r.fr = newFrameAcct()
	}
	return r, nil
}

// Start reads until Stop's deadline or an error.
func (r *Receiver) Start(epoch time.Time) {
	r.epoch = epoch
	go r.run()
}

// run reads on a thread of its own, which sleeps in the receive call
// itself where the platform allows (takeOver): an arrival then wakes that
// thread alone.
func (r *Receiver) run() {
	defer close(r.done)
	defer r.io.close()
	defer func() {
		n, ok := r.io.socketDrops()
		r.drops.Store(n)
		r.dropsKnown.Store(ok)
	}()
	yield.Enter(true)
	defer yield.Leave(true)
	var y yield.Yielder
	for {
		y.At(time.Now().UnixNano())
		segs, err := r.io.recv()
		if err != nil {
			if !(r.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded)) && !isTransientRecv(err) {
				r.setErr(err)
				return
			}
			if r.stopping.Load() {
				return
			}
			continue
		}
		r.account(segs)
	}
}

func (r *Receiver) account(segs []Segment) {
	var bytes int64
	r.mu.Lock()
	for i := range segs {
		sg := &segs[i]
		seq, sentNs, ok := r.m.match(sg.Payload)
		if !ok {
			if r.ownHello(sg.Payload) {
				continue // the client resends its hello until the server's ready arrives
			}
			r.foreign.Add(1)
			continue
		}
		if r.sig != nil && !r.sig.Verify(sg.Payload) {
			r.forged.Add(1)
			continue
		}
		var fr Frame
		if r.fr != nil {
			var err error
			if fr, err = ParseFrame(sg.Payload); err != nil {
				r.foreign.Add(1) // our token and stream, but not what our sender sends
				continue
			}
		}
		if r.stats.Add(stats.Arrival{Seq: seq, SentNs: sentNs, RecvNs: sg.RecvNs, SharedRecvTime: sg.Shared}) && r.fr != nil {
			r.fr.add(fr, seq, sg.RecvNs)
		}
		if r.arr != nil {
			r.arr.add(sg.RecvNs, sg.Shared)
		}
		bytes += int64(len(sg.Payload))
	}
	r.mu.Unlock()
	if bytes > 0 {
		now := int64(time.Since(r.epoch))
		if r.bytes.Add(bytes) == bytes {
			r.firstNano.Store(max(now, 1))
		}
		r.lastNano.Store(now)
	}
}

// ownHello reports whether b is this stream's own hello. The client
// resends it every 50 ms until the server's ready message comes back, so
// over a long path a few reach the stream's socket after the server took
// it over: they are set-up, not test data, and not anyone else's.
func (r *Receiver) ownHello(b []byte) bool {
	h, ok := ParseHello(b)
	return ok && h.Token == r.cfg.Token && h.StreamID == r.cfg.StreamID
}

// Stop lets the receiver read what is still in flight until deadline.
func (r *Receiver) Stop(deadline time.Time) {
	r.stopping.Store(true)
	r.io.setReadDeadline(deadline)
}

// Abort ends the receiver now.
func (r *Receiver) Abort() { r.Stop(time.Now()) }

// Done is closed when the read loop has ended.
func (r *Receiver) Done() <-chan struct{} { return r.done }

// Bytes is the payload of our datagrams received so far, duplicates and
// late ones included (they crossed the network).
func (r *Receiver) Bytes() int64 { return r.bytes.Load() }

// Foreign counts datagrams dropped for an unknown token or stream.
func (r *Receiver) Foreign() int64 { return r.foreign.Load() }

// Forged counts datagrams that named this stream but carried no valid
// MAC, with authentication on: someone who saw the token on the wire, not
// the sender. They are in no other count.
func (r *Receiver) Forged() int64 { return r.forged.Load() }

// LastByte is when the last datagram arrived, since the epoch.
func (r *Receiver) LastByte() time.Duration { return time.Duration(r.lastNano.Load()) }

// FirstByte is when the first datagram arrived, since the epoch; 0
// before it.
func (r *Receiver) FirstByte() time.Duration { return time.Duration(r.firstNano.Load()) }

// Cut closes an interval and returns its figures.
func (r *Receiver) Cut() result.UDP {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.stats.Cut(time.Now().UnixNano())
	if r.fr != nil {
		f := r.fr.cut()
		u.Frames = &f
	}
	return u
}

// Final closes the stream; sentTotal is the sender's count, or -1.
func (r *Receiver) Final(sentTotal int64) result.UDP {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.stats.Final(time.Now().UnixNano(), sentTotal)
	r.socketDropsTo(&u)
	if r.fr != nil {
		f := r.fr.final(sentTotal)
		u.Invalid += r.fr.bad
		u.Frames = &f
	}
	return u
}

// socketDropsTo puts the socket's own drop count in u, once the read loop
// has ended and only where the platform counts it.
func (r *Receiver) socketDropsTo(u *result.UDP) {
	select {
	case <-r.done:
	default:
		return
	}
	if !r.dropsKnown.Load() {
		return
	}
	n := r.drops.Load()
	u.SocketDrops = &n
	u.SocketDropsGRO = r.io.features().GRO
}

// Settlements are what each interval row gains once Final has run.
func (r *Receiver) Settlements() []result.UDPSettlement {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats.Settlements()
}

// SetClockOffset lets the statistics report absolute one-way delay.
func (r *Receiver) SetClockOffset(offsetNs, errorBoundNs int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.SetClockOffset(offsetNs, errorBoundNs)
}

// Features says what the socket's I/O used.
func (r *Receiver) Features() Features { return r.io.features() }

// Err is the error that ended the receiver, if any.
func (r *Receiver) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

func (r *Receiver) setErr(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.errMu.Unlock()
}
