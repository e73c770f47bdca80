package advise

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
)

// A guided run's plan: how long each test runs, and how many streams the
// multi-stream test needs before its goodput is the path's rather than
// what the hosts' windows allow. The guide (internal/advise/guide) runs
// the tests; these functions decide from what the tests measured, so
// they are tested with injected measurements.

// Bounds of the plan.
const (
	// MinTestLength and MaxTestLength bound a test's chosen length.
	MinTestLength = 5 * time.Second
	MaxTestLength = 30 * time.Second
	// PlanRate is the rate whose slow start the first test's length
	// covers before anything is measured: slow start takes
	// log2(BDP ÷ 10 segments) RTTs, so a 10 Gbit/s path at the measured
	// RTT bounds what most paths need.
	PlanRate = 10e9
	// SlowStartRuns is how many times its slow start a chosen test
	// lasts, so that slow start takes at most a quarter of it, well under
	// the SlowStartShare that makes a verdict slow-start-limited.
	SlowStartRuns = 4
	// StreamGrowth multiplies the stream count from one multi-stream
	// test to the next while the streams are window-limited.
	StreamGrowth = 4
	// MaxPlanStreams bounds the stream count advise tries by itself.
	MaxPlanStreams = 64
	// StreamGain is the least goodput ratio over the best so far that
	// counts as more streams adding goodput.
	StreamGain = 1.2
	// MaxStreamTime bounds the time spent on further multi-stream tests.
	MaxStreamTime = 75 * time.Second
)

// TestLength is a test's length for a path of this RTT: long enough for
// slow start to a window of PlanRate's BDP to take at most
// 1/SlowStartRuns of it, within MinTestLength and MaxTestLength.
func TestLength(rtt time.Duration, mtu int) time.Duration {
	if rtt <= 0 {
		return MinTestLength
	}
	ss := slowStartSeconds(figures.BDP(PlanRate, rtt), rtt, mtu)
	return clampLength(time.Duration(SlowStartRuns * ss * float64(time.Second)))
}

// Lengthen says whether a single-stream test of length ran must be run
// again, longer, because the verdict on it would read slow-start-limited
// for a test too short (slow start took SlowStartShare of it, or never
// ended, and no window, buffer or CPU limit comes first), and for how
// long: until slow start (when it ended, or else at least the whole
// test) is 1/SlowStartRuns of the test, at most MaxTestLength. A stream
// held back by its window may never leave slow start: that is a window
// limit, and a longer test would not change it.
func Lengthen(m Measurement, rtt time.Duration, mtu int, ran time.Duration) (time.Duration, bool) {
	ss := m.SlowStart()
	if ss == nil || ran >= MaxTestLength {
		return ran, false
	}
	c := signalsOf(Evidence{Single: m, BaselineRTT: rtt, MTU: mtu})
	if !c.slowStartHeavy || firstLimit(c) != LimitSlowStart {
		return ran, false
	}
	took := ran.Seconds() // never ended: at least the whole test
	if ss.Ended {
		took = ss.End
	}
	next := clampLength(time.Duration(math.Ceil(SlowStartRuns*took) * float64(time.Second)))
	if next <= ran {
		return ran, false
	}
	return next, true
}

func clampLength(d time.Duration) time.Duration {
	d = d.Round(time.Second)
	return min(max(d, MinTestLength), MaxTestLength)
}

// StreamStep is one multi-stream test of a guided run.
type StreamStep struct {
	Streams    int     `json:"streams"`
	Seconds    float64 `json:"seconds"`
	GoodputBps float64 `json:"goodput_bps"`
	// WindowLimited: the streams spent at least figures.LimitedShare of
	// their busy time held back by a receive window or a send buffer,
	// so the goodput is what the windows allow, not the path.
	WindowLimited bool `json:"window_limited"`
}

// StepOf summarises a multi-stream measurement.
func StepOf(m Measurement) StreamStep {
	return StreamStep{Streams: m.Streams, Seconds: m.Seconds, GoodputBps: m.GoodputBps, WindowLimited: m.WindowLimited()}
}

// WindowLimited says whether the streams were held back by their
// windows (receive window or send buffer) for at least
// figures.LimitedShare of their busy time.
func (m *Measurement) WindowLimited() bool {
	if m == nil || m.TCP == nil || m.TCP.Limited == nil {
		return false
	}
	lt := m.TCP.Limited
	return lt.Rwnd+lt.Sndbuf >= figures.LimitedShare
}

// NextStreams is the stream count of the next multi-stream test, or 0
// to stop: stop once the last test was not window-limited (its goodput
// is the path's), once more streams stopped adding goodput (under
// StreamGain × the best before it), at MaxPlanStreams, or when the
// next test would take the multi-stream tests past MaxStreamTime
// (spent so far, next the next test's length).
func NextStreams(steps []StreamStep, spent, next time.Duration) int {
	if len(steps) == 0 {
		return 0
	}
	last := steps[len(steps)-1]
	if !last.WindowLimited || last.Streams >= MaxPlanStreams || spent+next > MaxStreamTime {
		return 0
	}
	if len(steps) > 1 {
		best := 0.0
		for _, s := range steps[:len(steps)-1] {
			best = max(best, s.GoodputBps)
		}
		if last.GoodputBps < StreamGain*best {
			return 0
		}
	}
	return min(MaxPlanStreams, last.Streams*StreamGrowth)
}

// BestStep is the index of the step with the highest goodput (-1 for
// none).
func BestStep(steps []StreamStep) int {
	best := -1
	for i, s := range steps {
		if best < 0 || s.GoodputBps > steps[best].GoodputBps {
			best = i
		}
	}
	return best
}

// A packet train: TrainDatagrams datagrams of TrainSize bytes sent as
// fast as the sender can. Where the sender is faster than the path, the
// path's narrowest link spaces them, and the rate they arrive at is its
// capacity (on the wire, with Ethernet's framing), whatever windows the
// hosts' TCP is held to, and whatever its congestion control made of the
// tests. advise sends them unless the bottleneck is given.
const (
	TrainDatagrams = 10000
	TrainSize      = 1472 // fills a 1500-byte MTU over IPv4
	// Trains is how many trains advise sends; the median capacity counts.
	// A router or host that stalls while it forwards a train either
	// spreads it out (reads low) or lets it go in a burst (reads high);
	// the median of three is the one neither did to.
	Trains = 3
	// TrainMargin: a train sent at least this many times faster than it
	// arrived was spaced by the path; one sent about as fast as it arrived
	// measured the sender.
	TrainMargin = 1.1
)

// Train is a packet train's estimate of the path's capacity.
type Train struct {
	Datagrams   int64   `json:"datagrams"`
	Received    int64   `json:"received"`
	SentWireBps float64 `json:"sent_wire_bps"`
	RecvWireBps float64 `json:"received_wire_bps"`
	// CapacityBps is RecvWireBps when the train was sent TrainMargin
	// faster than it arrived; 0 when the sender, not the path, set the
	// pace (or too little arrived to tell).
	CapacityBps float64 `json:"capacity_bps,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// TrainOf judges a train from its send and arrival rates (wire bit/s)
// and how many datagrams arrived.
func TrainOf(datagrams, received int64, sentWire, recvWire float64) Train {
	t := Train{Datagrams: datagrams, Received: received, SentWireBps: finite(sentWire), RecvWireBps: finite(recvWire)}
	if received >= 100 && t.RecvWireBps > 0 && t.SentWireBps >= TrainMargin*t.RecvWireBps {
		t.CapacityBps = t.RecvWireBps
	}
	return t
}

// HostPacedTrain says why a bottleneck measured from the tests is only a
// lower bound: the packet train that would have measured past them went
// out no faster than it arrived (TrainMargin), so the sending host, not
// the path, set its pace: a host short of CPU (a busy machine, a starved
// thread) can't outrun the path, and then neither the train nor the tests
// show the path's capacity. "" when the train measured a capacity, failed,
// too little arrived to tell, or none ran; and when the bottleneck is the
// train's (fromTrain).
func HostPacedTrain(t *Train, fromTrain bool) string {
	if t == nil || fromTrain || t.Error != "" || t.CapacityBps > 0 || t.Received < 100 || t.RecvWireBps <= 0 {
		return ""
	}
	return fmt.Sprintf("the packet trains went out at %s and arrived at %s (on the wire), less than %.1f× faster: the sending host, not the path, set their pace",
		rate(t.SentWireBps), rate(t.RecvWireBps), TrainMargin)
}

// MedianTrain is the train whose capacity is the median of those that
// measured one (the lower middle of an even count), or else the last
// one; nil for none.
func MedianTrain(trains []Train) *Train {
	if len(trains) == 0 {
		return nil
	}
	var valid []int
	for i, t := range trains {
		if t.CapacityBps > 0 {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		return &trains[len(trains)-1]
	}
	slices.SortStableFunc(valid, func(a, b int) int { return cmp.Compare(trains[a].CapacityBps, trains[b].CapacityBps) })
	return &trains[valid[(len(valid)-1)/2]]
}
