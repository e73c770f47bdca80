// Package tcpflow is the TCP data plane: senders and receivers that move
// bytes as fast as the path allows and count what they moved.
package tcpflow

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Budget hands a sender the bytes it may still send (-n): Take reserves up
// to want and returns how many (0: spent), Return gives back what a write
// did not send. The runner's shares one limit among a test's streams.
type Budget interface {
	Take(want int) int
	Return(n int)
}

// unlimited is the budget of a sender without -n.
type unlimited struct{}

func (unlimited) Take(want int) int { return want }
func (unlimited) Return(int)        {}

// Stream is one data connection in one direction, with its counters. The
// counters are atomics so that interval reports can read them while the
// data goroutine runs; everything else belongs to that goroutine until
// Done is closed.
type Stream struct {
	ID     int
	Sender bool
	// Conn is the connection as set up. Once the stream has started it
	// may have handed its socket to the stream's own descriptor and be
	// closed (takeOver): go through SyscallConn, Close and the stream's
	// methods then; its addresses stay readable.
	Conn *net.TCPConn

	epoch    time.Time
	bytes    atomic.Int64
	calls    atomic.Int64
	lastNano atomic.Int64 // since epoch: last byte moved
	// firstNano is when a receiver read its first byte, since epoch; 0
	// before it.
	firstNano atomic.Int64
	stopping  atomic.Bool
	// deadline ends the data loop's blocked calls on its own descriptor
	// (Unix ns; 0: none), as Go's deadlines do on Go's.
	deadline atomic.Int64
	own      ownedFD

	readLens  map[int]int64 // lengths of the reads that did not fill buf
	fullLen   int           // len(buf): most reads fill it, counted in fullReads
	fullReads int64
	zero      *zeroSource   // -Z: send with sendfile from this file
	file      io.Reader     // -F on a sender: each block is read from it
	sink      io.Writer     // -F on a receiver: what is read is written to it
	sock      io.ReadWriter // the socket, through rawIO where it can
	// --trip-times: a sender stamps each block (tripSeq numbers them), a
	// receiver times them in trip.
	stamp   bool
	tripSeq uint32
	trip    *TripReader
	// repeating fills a sender's block with spec.RepeatingPattern
	// (--repeating-payload); discard makes a receiver read with
	// MSG_TRUNC (--skip-rx-copy, discard_linux.go).
	repeating bool
	discard   bool
	done      chan struct{}
	errMu     sync.Mutex
	err       error
}

// NewStream wraps a connected socket.
func NewStream(id int, sender bool, conn *net.TCPConn) *Stream {
	return &Stream{ID: id, Sender: sender, Conn: conn, done: make(chan struct{})}
}

// UseZeroCopy makes a sender hand its blocks to the kernel with sendfile
// instead of copying them from user space (iperf3's -Z).
func (s *Stream) UseZeroCopy(blockLen int) error {
	z, err := newZeroSource(blockLen)
	if err != nil {
		return err
	}
	s.zero = z
	return nil
}

// UseFile gives a stream iperf3's -F: a sender sends f's bytes, block
// by block, and ends at its end; a receiver writes what it reads to f.
func (s *Stream) UseFile(f io.ReadWriter) {
	if s.Sender {
		s.file = f
	} else {
		s.sink = f
	}
}

// UseTripTimes gives a stream --trip-times: a sender stamps each block
// of blockLen bytes with its send time, a receiver times each block's
// delivery. blockLen must be at least TripHeaderLen (spec checks it).
func (s *Stream) UseTripTimes(blockLen int) {
	if s.Sender {
		s.stamp = true
	} else {
		s.trip = NewTripReader(blockLen)
	}
}

// UseRepeatingPayload makes a sender send iperf3's repeating pattern
// (--repeating-payload, spec.RepeatingPattern) instead of its block as
// given: zeros, the cheapest to fill, unless -F or --trip-times write
// into it.
func (s *Stream) UseRepeatingPayload() { s.repeating = s.Sender }

// UseSkipRxCopy makes a receiver read with MSG_TRUNC (--skip-rx-copy):
// the kernel counts the bytes and discards them without copying them to
// the block. On systems without it the reads copy, as iperf3's do there.
// A receiver that must look at the bytes (-F, --trip-times) keeps
// copying; spec and the client refuse those beside it.
func (s *Stream) UseSkipRxCopy() { s.discard = !s.Sender }

// Trip is a receiver's --trip-times reader; nil without it.
func (s *Stream) Trip() *TripReader { return s.trip }

// Start runs the stream's data loop in a goroutine. buf is the block it
// writes or reads into; it must not be shared with another stream.
func (s *Stream) Start(epoch time.Time, buf []byte, budget Budget) {
	s.epoch = epoch
	s.sock = s.Conn
	s.discard = s.discard && s.sink == nil && s.trip == nil
	if s.takeOver() {
		s.sock = blockingIO{s}
	} else if r, err := newRawIO(s.Conn); err == nil {
		r.trunc = s.discard
		s.sock = r
	}
	if s.Sender {
		if s.repeating {
			spec.RepeatingPattern(buf, 0)
		}
		go s.send(buf, budget)
	} else {

		s.readLens = make(map[int]int64)
		s.fullLen = len(buf)
		go s.receive(buf)
	}
}

func (s *Stream) send(buf []byte, budget Budget) {
	defer close(s.done)
	defer s.loopEnded()
	if budget == nil {
		budget = unlimited{}
	}
	for !s.stopping.Load() {
		n := budget.Take(len(buf))
		if n == 0 {
			break
		}
		if s.file != nil {
			r, err := io.ReadFull(s.file, buf[:n])
			budget.Return(n - r)
			if n = r; n == 0 {
				if err != io.EOF {
					s.setErr(fmt.Errorf("-F: %w", err))
				}
				break // the file's end ends the sending, as in iperf3
			}
		}
		if s.stamp {
			stampBlock(buf[:n], s.tripSeq, time.Now())
			s.tripSeq++
		}
		w, err := s.write(buf[:n])
		if s.stamp {
			w, err = s.finishBlock(buf[:n], w, err)
		}
		if w > 0 {
			s.bytes.Add(int64(w))
			s.calls.Add(1)
			s.lastNano.Store(int64(time.Since(s.epoch)))
		}
		budget.Return(n - w)
		if err != nil {
			if !s.stopping.Load() {
				s.setErr(err)
			}
			break
		}
	}
	// Half-close so the receiver sees EOF once it has read everything.
	s.closeWrite()
	if s.zero != nil {
		s.zero.close()
	}
}

// finishBlock sends the rest of a stamped block that a write took only
// part of: the receiver finds the stamps at multiples of the block's
// length, so a block must go whole (iperf2's --trip-times writes so
// too). Unstamped, a partial write is left as it is, as iperf3 does.
func (s *Stream) finishBlock(block []byte, w int, err error) (int, error) {
	for err == nil && w < len(block) {
		var k int
		k, err = s.write(block[w:])
		if k <= 0 && err == nil {
			err = io.ErrShortWrite
		}
		w += max(k, 0)
	}
	return w, err
}

// zeroSender sends from the zero file itself (sendfile off Go's poller).
type zeroSender interface {
	sendZeros(z *zeroSource, n int) (int, error)
}

// write sends one block, from buf or (with -Z) from the zero file.
func (s *Stream) write(buf []byte) (int, error) {
	if s.zero == nil {
		return s.sock.Write(buf)
	}
	if zs, ok := s.sock.(zeroSender); ok {
		return zs.sendZeros(s.zero, len(buf))
	}
	r, err := s.zero.reader(len(buf))
	if err != nil {
		return 0, err
	}
	n, err := s.Conn.ReadFrom(r)
	return int(n), err
}

func (s *Stream) receive(buf []byte) {
	defer close(s.done)
	defer s.loopEnded()
	for {
		n, err := s.sock.Read(buf)
		if n > 0 {
			at := time.Now()
			now := int64(at.Sub(s.epoch))
			if s.trip != nil {
				s.trip.Feed(buf[:n], at)
			}
			if s.bytes.Add(int64(n)) == int64(n) {
				s.firstNano.Store(max(now, 1))
			}
			s.calls.Add(1)
			s.lastNano.Store(now)
			if n == s.fullLen { // a map update per read showed in profiles
				s.fullReads++
			} else {
				s.readLens[n]++
			}
			if s.sink != nil {
				if _, err := s.sink.Write(buf[:n]); err != nil {
					s.setErr(fmt.Errorf("-F: %w", err))
					return
				}
			}
		}
		if err != nil {
			if s.trip != nil {
				s.trip.Finish()
			}
			if err != io.EOF && !(s.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded)) {
				s.setErr(err)
			}
			return
		}
	}
}

// Stop ends a sender at once (a blocked write is cut short) and bounds a
// receiver's wait for the rest of the data by deadline.
func (s *Stream) Stop(deadline time.Time) {
	s.stopping.Store(true)
	if s.Sender {
		deadline = time.Now()
	}
	s.setDeadline(deadline)
}

// setDeadline ends the data loop's calls at t, on whichever descriptor
// it uses (Go's calls fail harmlessly once Go's is closed).
func (s *Stream) setDeadline(t time.Time) {
	var ns int64 // the zero time: none, as for Go's deadlines
	if !t.IsZero() {
		ns = max(t.UnixNano(), 1)
	}
	s.deadline.Store(ns)
	if s.Sender {
		_ = s.Conn.SetWriteDeadline(t)
	} else {
		_ = s.Conn.SetReadDeadline(t)
	}
}

// Abort ends the stream now, either way.
func (s *Stream) Abort() {
	s.stopping.Store(true)
	s.setDeadline(time.Now())
}

// Epoch is the test's time zero, as Start was given it.
func (s *Stream) Epoch() time.Time { return s.epoch }

// Done is closed when the data loop has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Bytes is the number of bytes moved so far.
func (s *Stream) Bytes() int64 { return s.bytes.Load() }

// Calls is the number of writes or reads that moved data.
func (s *Stream) Calls() int64 { return s.calls.Load() }

// LastByte is when the last byte moved, since the epoch.
func (s *Stream) LastByte() time.Duration { return time.Duration(s.lastNano.Load()) }

// FirstByte is when a receiver read its first byte, since the epoch; 0
// before it, and for a sender.
func (s *Stream) FirstByte() time.Duration { return time.Duration(s.firstNano.Load()) }

// Err is the first error the data loop met, other than the end of data.
func (s *Stream) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *Stream) setErr(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
}

// MaxReadLengths bounds the histogram a report carries.
const MaxReadLengths = 16

// ReadLengths is the receiver's read-length histogram, most frequent
// first, at most MaxReadLengths entries. Call it only after Done.
func (s *Stream) ReadLengths() []result.ReadLength {
	out := make([]result.ReadLength, 0, len(s.readLens)+1)
	if s.fullReads > 0 {
		out = append(out, result.ReadLength{Length: s.fullLen, Count: s.fullReads})
	}
	for l, c := range s.readLens {
		out = append(out, result.ReadLength{Length: l, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Length < out[j].Length
	})
	if len(out) > MaxReadLengths {
		out = out[:MaxReadLengths]
	}
	return out
}
