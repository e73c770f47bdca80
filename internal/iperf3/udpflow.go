package iperf3

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/spec"
)

// udpStream is one iperf3 UDP stream on a connected socket: a paced
// sender or a receiver that keeps iperf3's loss and jitter figures.
//
// The pacing here is a minimal private schedule (a due time per burst,
// catching up when late); it gives way to internal/pace once that lands.
// The receiver's figures are iperf3's own definitions (a gap in the
// sequence counts as lost, a datagram below the highest sequence seen
// takes one back; RFC 3550 jitter with the first transit as reference),
// so both ends of a mixed test agree; internal/stats will add late and
// duplicate detection.
type udpStream struct {
	conn       *net.UDPConn
	sender     bool
	counters64 bool
	length     int
	rate       float64 // bits per second of datagrams; 0: as fast as possible
	burst      int
	repeating  bool // --repeating-payload

	epoch    time.Time
	bytes    atomic.Int64
	packets  atomic.Int64 // sender: datagrams sent; receiver: datagrams received
	sendErrs atomic.Int64
	lastNano atomic.Int64
	stopping atomic.Bool
	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}

	mu  sync.Mutex
	rx  udpRx
	err error
}

// udpRx is a receiver's running figures, iperf3's way.
type udpRx struct {
	maxSeq      int64   // highest sequence seen (iperf3's packet_count)
	lost        int64   // iperf3's cnt_error
	outOfOrder  int64   // arrived below the highest sequence seen
	jitter      float64 // seconds, RFC 3550 smoothing
	samples     int64
	prevTransit int64
	havePrev    bool
}

// udpSnap is a stream's cumulative counters at one moment.
type udpSnap struct {
	bytes, packets, sendErrs int64
	rx                       udpRx
}

func newUDPStream(conn *net.UDPConn, sender, counters64 bool, s spec.Spec) *udpStream {
	return &udpStream{
		conn: conn, sender: sender, counters64: counters64, length: s.Length, rate: s.Rate, burst: max(s.Burst, 1),
		repeating: s.RepeatingPayload,
		stopCh:    make(chan struct{}), done: make(chan struct{}),
	}
}

func (u *udpStream) start(epoch time.Time, budget *flowrun.Budget) {
	u.epoch = epoch
	if u.sender {
		go u.send(budget)
	} else {
		go u.receive()
	}
}

func (u *udpStream) send(budget *flowrun.Budget) {
	defer close(u.done)
	buf := make([]byte, max(u.length, HeaderLen(u.counters64)))
	if h := HeaderLen(u.counters64); u.repeating {
		spec.RepeatingPattern(buf[h:], h) // as iperf3's: the pattern from the buffer's start, under the header
	} else {
		fillPayload(buf[h:])
	}
	var gap time.Duration
	if u.rate > 0 {
		gap = time.Duration(float64(len(buf)*8*u.burst) / u.rate * 1e9)
	}
	next := u.epoch
	var seq uint64
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for !u.stopping.Load() {
		if gap > 0 {
			if wait := time.Until(next); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-u.stopCh:
					return
				}
			}
			next = next.Add(gap)
		}
		for range u.burst {
			if budget.Take(len(buf)) == 0 {
				return
			}
			now := time.Now()
			sec, usec := HeaderTime(now)
			PutUDPHeader(buf, UDPHeader{Sec: sec, Usec: usec, Seq: seq + 1}, u.counters64)
			n, err := u.conn.Write(buf)
			if err != nil {
				budget.Return(len(buf))
				if u.stopping.Load() || errors.Is(err, net.ErrClosed) {
					return
				}
				u.sendErrs.Add(1) // ENOBUFS, or ECONNREFUSED from an ICMP error: go on
				continue
			}
			seq++
			u.bytes.Add(int64(n))
			u.packets.Add(1)
			u.lastNano.Store(int64(now.Sub(u.epoch)))
		}
	}
}

func (u *udpStream) receive() {
	defer close(u.done)
	buf := make([]byte, 65536)
	for {
		n, err := u.conn.Read(buf)
		if err != nil {
			switch {
			case errors.Is(err, syscall.ECONNREFUSED):
				continue // an ICMP error from an earlier datagram
			case u.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, net.ErrClosed):
			default:
				u.setErr(err)
			}
			return
		}
		now := time.Now()
		h, err := ParseUDPHeader(buf[:n], u.counters64)
		if err != nil {
			continue // not a data datagram (a repeated connect message)
		}
		u.mu.Lock()
		u.rx.add(int64(h.Seq), h.Nanos(), now.UnixNano())
		u.mu.Unlock()
		u.bytes.Add(int64(n))
		u.packets.Add(1)
		u.lastNano.Store(int64(now.Sub(u.epoch)))
	}
}

func (r *udpRx) add(seq, sentNs, recvNs int64) {
	if seq >= r.maxSeq+1 {
		if seq > r.maxSeq+1 {
			r.lost += seq - 1 - r.maxSeq
		}
		r.maxSeq = seq
	} else {
		r.outOfOrder++
		if r.lost > 0 {
			r.lost--
		}
	}
	transit := recvNs - sentNs
	if !r.havePrev {
		r.prevTransit, r.havePrev = transit, true
	}
	d := transit - r.prevTransit
	if d < 0 {
		d = -d
	}
	r.prevTransit = transit
	r.jitter += (float64(d)/1e9 - r.jitter) / 16
	r.samples++
}

func (u *udpStream) snap() udpSnap {
	u.mu.Lock()
	rx := u.rx
	u.mu.Unlock()
	return udpSnap{bytes: u.bytes.Load(), packets: u.packets.Load(), sendErrs: u.sendErrs.Load(), rx: rx}
}

func (u *udpStream) stop(deadline time.Time) {
	u.stopping.Store(true)
	u.stopOnce.Do(func() { close(u.stopCh) })
	if !u.sender {
		_ = u.conn.SetReadDeadline(deadline)
	}
}

func (u *udpStream) abort() {
	u.stopping.Store(true)
	u.stopOnce.Do(func() { close(u.stopCh) })
	_ = u.conn.SetDeadline(time.Now())
}

func (u *udpStream) setErr(err error) {
	u.mu.Lock()
	if u.err == nil {
		u.err = err
	}
	u.mu.Unlock()
}

func (u *udpStream) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// fillPayload gives datagrams a non-repeating body, as iperf3 does by
// default (compressing links would flatter a repeating one).
func fillPayload(b []byte) {
	var x uint64 = 0x9e3779b97f4a7c15
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
}
