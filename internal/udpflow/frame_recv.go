package udpflow

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// Bounds of a receiver's frame accounting (frameAcct).
const (
	// frameWindow is the frames a receiver keeps open: a frame this many
	// frames older than the newest is judged (1.07 s at 60 frames a
	// second), so a re-ordered datagram may arrive that much later.
	frameWindow = 64
	// maxFrameJump is the furthest a frame number may lie beyond the
	// newest (or, for the first, beyond 0): 4.6 hours of frames at the
	// most frames a second. A datagram beyond it is not the sender's.
	maxFrameJump = 1 << 24
	// maxFrameLatencyUs bounds the latency histogram (a minute; a later
	// frame counts there, its exact latency in the maximum).
	maxFrameLatencyUs = 60_000_000
)

// FrameAcctBytes is what a receiver's frame accounting holds at most:
// two latency histograms (20 KB each) and frameWindow open frames. A
// server's admission charges it to each isochronous stream.
const FrameAcctBytes = 48 << 10

type openFrame struct {
	dueNs      int64
	count, got uint32
	firstSeq   uint64 // the sequence number of its first datagram
	lastRecvNs int64
	done       bool // complete, and judged so
}

// frameSpan is the frames judged in an interval row or in the whole test.
// The histogram gives the percentiles; the extremes and the mean are
// kept exact, so that a bound on them (no frame faster than the path)
// is not blurred by its buckets.
type frameSpan struct {
	complete, incomplete, skipped, cut, negative, jitterSamples int64
	lat                                                         *hdrhistogram.Histogram
	latMin, latMax, latSum                                      int64 // ns, of the non-negative latencies
}

func newFrameSpan() frameSpan {
	return frameSpan{lat: hdrhistogram.New(1, maxFrameLatencyUs, 2)}
}

func (s *frameSpan) figures(jitterNs float64) result.Frames {
	f := result.Frames{
		Seen: s.complete + s.incomplete, Complete: s.complete, Incomplete: s.incomplete,
		Skipped: s.skipped, Cut: s.cut, Negative: s.negative,
		JitterSamples: s.jitterSamples, JitterMs: jitterNs / 1e6,
	}
	if n := s.lat.TotalCount(); n > 0 {
		p := stats.Summarize(s.lat, 1000) // the histogram holds µs
		p.Min, p.Max = float64(s.latMin)/1e3, float64(s.latMax)/1e3
		p.Mean = float64(s.latSum) / float64(n) / 1e3
		for _, q := range []*float64{&p.P50, &p.P90, &p.P99, &p.P999} { // a bucket's edge may lie past the extremes
			*q = min(max(*q, p.Min), p.Max)
		}
		f.Latency = &p
	}
	return f
}

// frameAcct is a receiver's account of an isochronous stream's frames
// (docs/udp.md, "Isochronous frames"): each datagram the UDP statistics
// took as new (not a duplicate, not late, not invalid) counts towards
// its frame; a frame is complete when all its datagrams have come, and
// judged incomplete, or skipped when none came, once it falls
// frameWindow frames behind the newest, or at the end. Memory is bounded
// by frameWindow, whatever the frame numbers.
type frameAcct struct {
	open    map[uint64]*openFrame
	newest  uint64
	started bool
	judged  uint64 // every frame below it is judged
	iv, tot frameSpan
	// jitter is RFC 3550's J over consecutive complete frames'
	// latencies, in ns.
	jitter   float64
	prevLat  int64
	havePrev bool
	bad      int64 // datagrams whose frame fields no sender sends
}

func newFrameAcct() *frameAcct {
	return &frameAcct{open: map[uint64]*openFrame{}, iv: newFrameSpan(), tot: newFrameSpan()}
}

// add accounts for a datagram of frame f with sequence number seq,
// received at recvNs (the receiver's clock).
func (a *frameAcct) add(f Frame, seq uint64, recvNs int64) {
	if a.started && f.Number > a.newest && f.Number-a.newest > maxFrameJump || !a.started && f.Number > maxFrameJump ||
		uint64(f.Index) > seq {
		a.bad++
		return
	}
	if f.Number < a.judged {
		return // a straggler of a frame already judged
	}
	of := a.open[f.Number]
	if of == nil {
		of = &openFrame{dueNs: f.DueNs, count: f.Count, firstSeq: seq - uint64(f.Index)}
		a.open[f.Number] = of
	}
	if of.done || of.got >= of.count {
		return
	}
	of.got++
	of.lastRecvNs = max(of.lastRecvNs, recvNs)
	if of.got == of.count {
		a.complete(of)
	}
	if !a.started || f.Number > a.newest {
		a.newest, a.started = f.Number, true
		if a.newest >= frameWindow {
			a.judgeBelow(a.newest-frameWindow+1, -1)
		}
	}
}

func (a *frameAcct) complete(of *openFrame) {
	of.done = true
	lat := of.lastRecvNs - of.dueNs
	for _, s := range []*frameSpan{&a.iv, &a.tot} {
		s.complete++
		if lat < 0 {
			s.negative++
			continue
		}
		if s.lat.TotalCount() == 0 || lat < s.latMin {
			s.latMin = lat
		}
		s.latMax = max(s.latMax, lat)
		s.latSum += lat
		_ = s.lat.RecordValue(min(max(lat/1000, 1), maxFrameLatencyUs))
	}
	if a.havePrev {
		a.jitter += (math.Abs(float64(lat-a.prevLat)) - a.jitter) / 16
		a.iv.jitterSamples++
		a.tot.jitterSamples++
	}
	a.prevLat, a.havePrev = lat, true
}

// judgeBelow judges every frame below h: an open frame not complete is
// incomplete, or cut when sentTotal (the sender's datagram count, -1
// when unknown) shows its missing datagrams were never sent; a number
// with no frame open was skipped (nothing of it arrived).
func (a *frameAcct) judgeBelow(h uint64, sentTotal int64) {
	if h <= a.judged {
		return
	}
	present := uint64(0)
	for n, of := range a.open {
		if n >= h {
			continue
		}
		present++
		if !of.done {
			cut := sentTotal >= 0 && of.firstSeq+uint64(of.count) > uint64(sentTotal)
			for _, s := range []*frameSpan{&a.iv, &a.tot} {
				if cut {
					s.cut++
				} else {
					s.incomplete++
				}
			}
		}
		delete(a.open, n)
	}
	skipped := int64(h - a.judged - present)
	a.iv.skipped += skipped
	a.tot.skipped += skipped
	a.judged = h
}

// cut closes an interval row and returns its figures.
func (a *frameAcct) cut() result.Frames {
	f := a.iv.figures(a.jitter)
	lat := a.iv.lat
	lat.Reset()
	a.iv = frameSpan{lat: lat}
	return f
}

// final judges every frame still open and returns the test's figures.
func (a *frameAcct) final(sentTotal int64) result.Frames {
	if a.started {
		a.judgeBelow(a.newest+1, sentTotal)
	}
	return a.tot.figures(a.jitter)
}
