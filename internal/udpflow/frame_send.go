package udpflow

import (
	"errors"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/result"
)

// FrameLateTolerance is how late a frame may begin against its schedule
// and still count as on time: a sleep on a loaded host wakes a few hundred
// microseconds late, which a frame period (16.7 ms at 60 frames a second)
// does not notice.
const FrameLateTolerance = time.Millisecond

// frameClock is an isochronous sender's time: the host's (realClock), or
// a test's.
type frameClock interface {
	Now() time.Time
	// Until waits until t; false when stop was closed first.
	Until(t time.Time, stop <-chan struct{}) bool
}

type realClock struct{ s *pace.Sleeper }

func (realClock) Now() time.Time                                 { return time.Now() }
func (c realClock) Until(t time.Time, stop <-chan struct{}) bool { return c.s.Until(t, stop) }

// frameCounts is what an isochronous sender did (a frame counts once its
// first datagram left), read by other goroutines
// while it runs.
type frameCounts struct {
	sent, late, lateMaxNs atomic.Int64
	rowLateMaxNs          atomic.Int64 // since the last TakeRowLateMaxMs
}

func (c *frameCounts) begun(lateNs int64) {
	c.sent.Add(1)
	if lateNs > int64(FrameLateTolerance) {
		c.late.Add(1)
	}
	if lateNs > c.lateMaxNs.Load() {
		c.lateMaxNs.Store(lateNs)
	}
	if lateNs > c.rowLateMaxNs.Load() {
		c.rowLateMaxNs.Store(lateNs)
	}
}

// TakeRowLateMaxMs is the latest start since the last call, for an
// interval row, in ms.
func (c *frameCounts) TakeRowLateMaxMs() float64 {
	return float64(max(c.rowLateMaxNs.Swap(0), 0)) / 1e6
}

// Frames is the sender's frame counts so far (Sent, Late, LateMaxMs).
func (c *frameCounts) Frames() result.Frames {
	return result.Frames{Sent: c.sent.Load(), Late: c.late.Load(), LateMaxMs: float64(c.lateMaxNs.Load()) / 1e6}
}

// frameSender sends an isochronous stream: frame k is due k periods after
// the start (isoch.Frames.Due), of a size drawn by isoch.Sizer rounded up
// to whole datagrams of size bytes, its datagrams ipg apart (or in
// batches of up to batch, back to back, when ipg is 0). A frame that
// begins late is sent late, all of it, and counted (frameCounts.late):
// the schedule keeps its phase, so a sender that fell behind sends the
// frames it owes back to back until it has caught up.
type frameSender struct {
	f      isoch.Frames
	size   int // bytes a datagram
	batch  int // datagrams a send call, with ipg 0
	clock  frameClock
	sizer  *isoch.Sizer
	budget Budget
	signer *Signer
	// send sends the first n datagrams of buf (each size bytes): how many
	// went, and the error that stopped the rest.
	send func(buf []byte, n int) (int, error)
	// sentNow is told of each send call's datagrams.
	sentNow  func(k int)
	stopping func() bool
	stop     <-chan struct{}
	counts   *frameCounts
	sendErrs *atomic.Int64
	full     int64 // sends refused for a full queue
	sends    int64
	maxBatch int // the most datagrams a send call carried
}

// run sends frames from start until stop, the budget or an error, with
// buf holding batch datagrams whose headers were written; seq is the
// first sequence number. It returns the error that ended it, if not a
// stop.
func (s *frameSender) run(buf []byte, start time.Time) error {
	var seq uint64
	for k := int64(0); !s.stopping(); k++ {
		due := s.f.Due(start, k)
		if !s.clock.Until(due, s.stop) {
			return nil
		}
		begin := s.clock.Now()
		count := frameDatagrams(s.sizer.Next(1), s.size)
		frame := Frame{Number: uint64(k), DueNs: due.UnixNano(), Count: uint32(count)}
		for i := 0; i < count; {
			if s.stopping() {
				return nil // the frame is cut: the receiver knows it by the sender's count
			}
			n := 1
			if s.f.IPG > 0 {
				if i > 0 && !s.clock.Until(begin.Add(time.Duration(i)*s.f.IPG), s.stop) {
					return nil
				}
			} else {
				n = min(count-i, s.batch)
			}
			if s.budget != nil {
				got := s.budget.Take(n * s.size)
				if got == 0 {
					return nil
				}
				n = max(1, got/s.size)
				s.budget.Return(max(0, got-n*s.size))
			}
			ns := s.clock.Now().UnixNano()
			for j := range n {
				b := buf[j*s.size:]
				PutSeqTime(b, seq+uint64(j), ns)
				frame.Index = uint32(i + j)
				PutFrame(b, frame)
				if s.signer != nil {
					s.signer.Sign(b)
				}
			}
			sent, err := s.send(buf, n)
			s.sends++
			s.maxBatch = max(s.maxBatch, sent)
			if sent > 0 && i == 0 {
				s.counts.begun(int64(begin.Sub(due))) // a frame counts once a datagram of it left
			}
			if sent > 0 {
				seq += uint64(sent)
				i += sent
				s.sentNow(sent)
			}
			if sent < n && s.budget != nil {
				s.budget.Return((n - sent) * s.size)
			}
			if err != nil {
				if !transientSendError(err) {
					return err
				}
				s.sendErrs.Add(1)
				if !errors.Is(err, syscall.ECONNREFUSED) {
					s.full++
				}
				// A full queue delays the frame's datagrams; it drops none.
				if !s.clock.Until(s.clock.Now().Add(100*time.Microsecond), s.stop) {
					return nil
				}
			}
		}
	}
	return nil
}

// frameDatagrams is the datagrams of size bytes that carry a frame of
// bytes: at least one, at most MaxFrameDatagrams.
func frameDatagrams(bytes, size int) int {
	return min(max(1, (bytes+size-1)/size), MaxFrameDatagrams)
}
