package mcast

import (
	"math"
	"time"

	"github.com/wireperf/wireperf/internal/iperf2wire"
)

// maxOpenFrames bounds the frames a receiver waits on for one sender: a
// frame this many frames older than the newest is judged then.
const maxOpenFrames = 64

// FrameStats is what a receiver saw of an isochronous sender's frames.
type FrameStats struct {
	// Frames is the frames of which a datagram arrived; Complete those
	// whose every byte did, Incomplete the others (a datagram lost).
	Frames     int64 `json:"frames"`
	Complete   int64 `json:"complete"`
	Incomplete int64 `json:"incomplete"`
	// Skipped is frames the sender never sent because it was late by a
	// whole period (iperf 2's slip), seen in the frame numbers' gaps.
	Skipped int64 `json:"skipped"`
	// Latency is a complete frame's delivery time: the arrival of its
	// last byte less the send time of its first datagram (the two hosts'
	// clocks, so relative unless they are synchronised), in ms.
	LatencyMinMs  float64 `json:"latency_min_ms"`
	LatencyMeanMs float64 `json:"latency_mean_ms"`
	LatencyMaxMs  float64 `json:"latency_max_ms"`
	// JitterMs is RFC 3550's smoothed variation of consecutive complete
	// frames' latencies, in ms.
	JitterMs float64 `json:"jitter_ms"`
}

type openFrame struct {
	firstSent time.Time
	size, got int64
	lastRecv  time.Time
}

// frameAcct accounts for one sender's frames.
type frameAcct struct {
	open        map[uint32]*openFrame
	newest      uint32
	st          FrameStats
	latSum      float64
	prevLat     float64
	havePrevLat bool
}

func newFrameAcct() *frameAcct { return &frameAcct{open: map[uint32]*openFrame{}} }

// add accounts for a datagram of n bytes of frame f, sent at sent and
// received at recv.
func (a *frameAcct) add(f iperf2wire.Isoch, n int, sent, recv time.Time) {
	if f.Frame == 0 {
		return // the FIN's fields, or a sender's before its first frame
	}
	if f.Frame+maxOpenFrames <= a.newest {
		return // long judged: a straggler
	}
	of := a.open[f.Frame]
	if of == nil {
		if f.Frame > a.newest {
			if a.newest != 0 && f.PrevFrame == a.newest && f.Frame > f.PrevFrame+1 {
				a.st.Skipped += int64(f.Frame - f.PrevFrame - 1)
			}
			a.newest = f.Frame
		}
		of = &openFrame{firstSent: sent, size: int64(f.BurstSize)}
		a.open[f.Frame] = of
		a.st.Frames++
	}
	if sent.Before(of.firstSent) {
		of.firstSent = sent
	}
	of.got += int64(n)
	if recv.After(of.lastRecv) {
		of.lastRecv = recv
	}
	if of.got >= of.size {
		a.complete(of)
		delete(a.open, f.Frame)
	}
	for id := range a.open {
		if id+maxOpenFrames <= a.newest {
			a.st.Incomplete++
			delete(a.open, id)
		}
	}
}

func (a *frameAcct) complete(of *openFrame) {
	lat := float64(of.lastRecv.Sub(of.firstSent)) / 1e6
	a.st.Complete++
	a.latSum += lat
	if a.st.Complete == 1 || lat < a.st.LatencyMinMs {
		a.st.LatencyMinMs = lat
	}
	if a.st.Complete == 1 || lat > a.st.LatencyMaxMs {
		a.st.LatencyMaxMs = lat
	}
	if a.havePrevLat {
		a.st.JitterMs += (math.Abs(lat-a.prevLat) - a.st.JitterMs) / 16
	}
	a.prevLat, a.havePrevLat = lat, true
}

// final judges the frames still open (incomplete) and returns the stats.
func (a *frameAcct) final() FrameStats {
	a.st.Incomplete += int64(len(a.open))
	clear(a.open)
	if a.st.Complete > 0 {
		a.st.LatencyMeanMs = a.latSum / float64(a.st.Complete)
	}
	return a.st
}
