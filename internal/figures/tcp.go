package figures

import (
	"fmt"
	"math"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// TCP arithmetic: line rate, BDP, the limited-time
// breakdown and the RFC 6349 figures. Everything here is pure: it reads
// results and returns numbers.

// Per-packet bytes of the line-rate arithmetic (docs/metrics.md,
// "Throughput"): IPv4 and TCP headers with the timestamp option, and what
// Ethernet adds on the wire (header 14, FCS 4, preamble 8, gap 12).
const (
	TCPIPHeaderBytes = 52
	EthernetOverhead = 38
	DefaultMTU       = 1500
)

// LineRateGoodput is the most TCP payload a link of rate bit/s carries
// with full segments at this MTU: rate × (MTU − 52) ÷ (MTU + 38), that is
// 941 Mbit/s on 1 Gbit/s Ethernet at MTU 1500 and 990 Mbit/s at 9000. An
// MTU of 0 means 1500.
func LineRateGoodput(rate float64, mtu int) float64 {
	if mtu <= 0 {
		mtu = DefaultMTU
	}
	if rate <= 0 || mtu <= TCPIPHeaderBytes {
		return 0
	}
	return rate * float64(mtu-TCPIPHeaderBytes) / float64(mtu+EthernetOverhead)
}

// BDP is the bandwidth-delay product in bytes: rate (bit/s) × RTT ÷ 8.
// 1 Gbit/s over 215 ms is 26.9 MB.
func BDP(rate float64, rtt time.Duration) float64 {
	if rate <= 0 || rtt <= 0 {
		return 0
	}
	return rate * rtt.Seconds() / 8
}

// WindowRate is the most a window of bytes carries per RTT, in bit/s:
// 64 KiB over 215 ms is 2.44 Mbit/s.
func WindowRate(window float64, rtt time.Duration) float64 {
	if window <= 0 || rtt <= 0 {
		return 0
	}
	return window * 8 / rtt.Seconds()
}

// LimitedShare of busy time makes the receiver's window or the sender's
// buffer the limit of a stream.
const LimitedShare = 0.3

// LimitedTime is Web100's SndLimTime from TCP_INFO: of the time the sender
// had data in flight (busy), how much the receiver's window held it back,
// how much its own send buffer did, and the rest, which the network
// (congestion window, pacing) set. Shares are of busy time, 0 to 1.
type LimitedTime struct {
	BusyUs          uint64  `json:"busy_time_us"`
	RwndLimitedUs   uint64  `json:"rwnd_limited_us"`
	SndbufLimitedUs uint64  `json:"sndbuf_limited_us"`
	NetworkUs       uint64  `json:"network_limited_us"`
	Rwnd            float64 `json:"rwnd_limited_share"`
	Sndbuf          float64 `json:"sndbuf_limited_share"`
	Network         float64 `json:"network_limited_share"`
}

// Limited splits busy time; ok is false without busy time (no TCP_INFO,
// or a kernel before 4.9).
func Limited(busy, rwnd, sndbuf uint64) (LimitedTime, bool) {
	lt := LimitedTime{BusyUs: busy, RwndLimitedUs: rwnd, SndbufLimitedUs: sndbuf}
	if busy == 0 {
		return lt, false
	}
	// The kernel's chronographs may overlap the busy one by a tick at
	// the end; no share may pass 1.
	rwnd, sndbuf = min(rwnd, busy), min(sndbuf, busy-min(rwnd, busy))
	lt.NetworkUs = busy - rwnd - sndbuf
	lt.Rwnd = float64(rwnd) / float64(busy)
	lt.Sndbuf = float64(sndbuf) / float64(busy)
	lt.Network = float64(lt.NetworkUs) / float64(busy)
	return lt, true
}

// Efficiency is RFC 6349's TCP Efficiency in percent: (bytes sent − bytes
// retransmitted) ÷ bytes sent. ok is false when nothing was sent.
func Efficiency(sent, retrans uint64) (float64, bool) {
	if sent == 0 {
		return 0, false
	}
	return 100 * float64(sent-min(retrans, sent)) / float64(sent), true
}

// MinBufferDelayBaseline is the shortest baseline RTT Buffer Delay is
// given for. Below it the "path" is the hosts' own processing (loopback,
// or a cable between two hosts), which the kernel's RTT clock, ticking
// in microseconds, reads as 1 µs or a few: a ratio over that measures
// rounding and scheduling, not a network's buffers (a loopback test
// would read 27600%).
const MinBufferDelayBaseline = 20 * time.Microsecond

// BufferDelay is RFC 6349's Buffer Delay in percent: (mean RTT during
// the transfer − baseline RTT) ÷ baseline RTT. ok is false without both,
// or with a baseline below MinBufferDelayBaseline.
func BufferDelay(meanRTT, baselineRTT time.Duration) (float64, bool) {
	if meanRTT <= 0 || baselineRTT < MinBufferDelayBaseline {
		return 0, false
	}
	return 100 * float64(meanRTT-baselineRTT) / float64(baselineRTT), true
}

// TransferTimeRatio is RFC 6349's TCP Transfer Time Ratio: the actual
// time to move bytes ÷ the ideal time at idealRate (bit/s): 1 is ideal,
// 2 took twice as long. ok is false when either is unknown.
func TransferTimeRatio(bytes int64, seconds, idealRate float64) (float64, bool) {
	if bytes <= 0 || seconds <= 0 || idealRate <= 0 {
		return 0, false
	}
	return seconds / (float64(bytes) * 8 / idealRate), true
}

// StreamFigures are one sending stream's TCP internals as the report
// shows them.
type StreamFigures struct {
	Limited *LimitedTime `json:"limited,omitempty"`
	// RFC 6349 TCP Efficiency, percent, and what it comes from.
	EfficiencyPercent *float64 `json:"tcp_efficiency_percent,omitempty"`
	BytesSent         uint64   `json:"bytes_sent"`
	BytesRetrans      uint64   `json:"bytes_retransmitted"`
	Retransmits       int64    `json:"retransmits"`
	CwndReductions    int      `json:"cwnd_reductions"`
	// RFC 6349 Buffer Delay, percent: the mean RTT over the baseline.
	BufferDelayPercent *float64 `json:"buffer_delay_percent,omitempty"`
	BaselineRTTus      uint32   `json:"baseline_rtt_us,omitempty"`
	MeanRTTus          uint32   `json:"mean_rtt_us,omitempty"`
	MaxSndWnd          uint64   `json:"max_snd_wnd,omitempty"`
	// WindowPlateau says whether the receiver's advertised window had
	// stopped growing: by the middle of the test it was already within
	// 80% of its largest. A window held back by a buffer limit plateaus;
	// one that autotuning is still opening does not. Nil without a
	// timeline.
	WindowPlateau *bool             `json:"window_plateau,omitempty"`
	SlowStart     *SlowStartFigures `json:"slow_start,omitempty"`
}

// SlowStartFigures say when slow start ended and what it cost a test:
// the rate before and after, and the share of the test it took. A test
// much shorter than its slow start reads low (docs/metrics.md, "Slow start").
type SlowStartFigures struct {
	Ended bool `json:"ended"`
	// End is seconds since the test start (the first sample that shows
	// it, so within one sampling period); Cause is "loss" or "ssthresh".
	End   float64 `json:"end,omitempty"`
	Cause string  `json:"cause,omitempty"`
	// Share is End ÷ the test's length (1 when it never ended).
	Share      float64 `json:"share"`
	CwndBytes  uint64  `json:"cwnd_bytes,omitempty"`
	RateBefore float64 `json:"rate_before_bps,omitempty"`
	RateAfter  float64 `json:"rate_after_bps,omitempty"`
	Duration   float64 `json:"test_seconds"`
}

// FiguresOf computes a sending stream's figures; nil when the stream has
// no TCP statistics (a receiver, UDP, or a system without TCP_INFO).
func FiguresOf(s *result.Stream) *StreamFigures {
	if s == nil || s.TCPStats == nil {
		return nil
	}
	st := s.TCPStats
	f := &StreamFigures{
		BytesSent: st.BytesSent, BytesRetrans: st.BytesRetrans, Retransmits: s.Retransmits,
		CwndReductions: st.CwndReductions, BaselineRTTus: st.BaselineRTTus, MeanRTTus: st.MeanRTTus,
		MaxSndWnd: st.MaxSndWnd,
	}
	if lt, ok := Limited(st.BusyUs, st.RwndLimitedUs, st.SndbufLimitedUs); ok {
		f.Limited = &lt
	}
	if e, ok := Efficiency(st.BytesSent, st.BytesRetrans); ok {
		f.EfficiencyPercent = &e
	}
	if d, ok := BufferDelay(us(st.MeanRTTus), us(st.BaselineRTTus)); ok {
		f.BufferDelayPercent = &d
	}
	f.SlowStart = slowStartOf(s)
	f.WindowPlateau = windowPlateau(s.TCPTimeline)
	return f
}

// windowPlateau reports whether the advertised window was within 80% of
// its largest by the middle of the timeline.
func windowPlateau(tl *result.TCPTimeline) *bool {
	if tl == nil || len(tl.Samples) < 4 {
		return nil
	}
	half := tl.Samples[len(tl.Samples)-1].T / 2
	var early, all uint32
	for _, s := range tl.Samples {
		all = max(all, s.SndWnd)
		if s.T <= half {
			early = max(early, s.SndWnd)
		}
	}
	if all == 0 {
		return nil
	}
	p := float64(early) >= 0.8*float64(all)
	return &p
}

func slowStartOf(s *result.Stream) *SlowStartFigures {
	st := s.TCPStats
	if st.SlowStart == nil && !st.SlowStartOngoing {
		return nil // no timeline
	}
	d := st.Duration
	if d <= 0 {
		d = s.End
	}
	ss := &SlowStartFigures{Duration: d, Share: 1}
	last := lastSample(s.TCPTimeline)
	if e := st.SlowStart; e != nil {
		ss.Ended, ss.End, ss.Cause, ss.CwndBytes = true, e.End, e.Cause, e.CwndBytes
		if d > 0 {
			ss.Share = min(e.End/d, 1)
		}
		if e.End > 0 {
			ss.RateBefore = float64(e.BytesAcked) * 8 / e.End
		}
		if last != nil && last.T > e.End && last.BytesAcked >= e.BytesAcked {
			ss.RateAfter = float64(last.BytesAcked-e.BytesAcked) * 8 / (last.T - e.End)
		}
	} else if last != nil && last.T > 0 {
		ss.RateBefore = float64(last.BytesAcked) * 8 / last.T
	}
	return ss
}

func lastSample(tl *result.TCPTimeline) *result.TCPSample {
	if tl == nil || len(tl.Samples) == 0 {
		return nil
	}
	return &tl.Samples[len(tl.Samples)-1]
}

// DirectionFigures are a direction's TCP internals over all its sending
// streams, and its RFC 6349 Transfer Time Ratio.
type DirectionFigures struct {
	Direction string `json:"direction"`
	Streams   int    `json:"streams"` // sending streams with TCP figures
	StreamFigures
	// SlowStartFirst and SlowStartLast are the earliest and latest end
	// of slow start over the streams (seconds since the test start).
	SlowStartFirst float64 `json:"slow_start_first_end,omitempty"`
	SlowStartLast  float64 `json:"slow_start_last_end,omitempty"`
	// The Transfer Time Ratio needs the bottleneck rate: IdealBps is the
	// TCP goodput a full bottleneck gives (line-rate arithmetic).
	BottleneckBps     float64  `json:"bottleneck_bps,omitempty"`
	IdealBps          float64  `json:"ideal_bps,omitempty"`
	GoodputBps        float64  `json:"goodput_bps"`
	TransferTimeRatio *float64 `json:"transfer_time_ratio,omitempty"`
}

// DirectionOf adds up a direction's sending streams. bottleneck is the
// path's bottleneck rate in bit/s (0 unknown); the ideal rate is its
// line-rate goodput at the senders' path MTU.
func DirectionOf(d result.Direction, bottleneck float64) *DirectionFigures {
	out := &DirectionFigures{Direction: d.Label(), GoodputBps: d.Received.BitsPerSecond(), BottleneckBps: bottleneck}
	var busy, rwnd, sndbuf, rttSum, rttN uint64
	mtu := 0
	var last *result.Stream
	for _, f := range d.Flows {
		s := f.Sent
		if s == nil || s.TCPStats == nil {
			continue
		}
		st := s.TCPStats
		out.Streams++
		last = s
		out.BytesSent += st.BytesSent
		out.BytesRetrans += st.BytesRetrans
		out.Retransmits += s.Retransmits
		out.CwndReductions += st.CwndReductions
		busy += st.BusyUs
		rwnd += min(st.RwndLimitedUs, st.BusyUs)
		sndbuf += min(st.SndbufLimitedUs, st.BusyUs)
		if st.RTTSamples > 0 {
			rttSum += uint64(st.MeanRTTus) * uint64(st.RTTSamples)
			rttN += uint64(st.RTTSamples)
		}
		if st.BaselineRTTus > 0 && (out.BaselineRTTus == 0 || st.BaselineRTTus < out.BaselineRTTus) {
			out.BaselineRTTus = st.BaselineRTTus
		}
		out.MaxSndWnd = max(out.MaxSndWnd, st.MaxSndWnd)
		if e := st.SlowStart; e != nil {
			if out.SlowStartFirst == 0 || e.End < out.SlowStartFirst {
				out.SlowStartFirst = e.End
			}
			out.SlowStartLast = max(out.SlowStartLast, e.End)
		}
		if m := pathMTU(s); m > 0 && (mtu == 0 || m < mtu) {
			mtu = m
		}
	}
	if out.Streams == 0 {
		return nil
	}
	if out.Streams == 1 {
		out.StreamFigures = *FiguresOf(last)
	} else {
		if lt, ok := Limited(busy, rwnd, sndbuf); ok {
			out.Limited = &lt
		}
		if e, ok := Efficiency(out.BytesSent, out.BytesRetrans); ok {
			out.EfficiencyPercent = &e
		}
		if rttN > 0 {
			out.MeanRTTus = uint32(rttSum / rttN)
		}
		if b, ok := BufferDelay(us(out.MeanRTTus), us(out.BaselineRTTus)); ok {
			out.BufferDelayPercent = &b
		}
	}
	if bottleneck > 0 {
		out.IdealBps = LineRateGoodput(bottleneck, mtu)
		if r, ok := TransferTimeRatio(d.Received.Bytes, d.Received.Seconds, out.IdealBps); ok {
			out.TransferTimeRatio = &r
		}
	}
	return out
}

// SlowStartEnds says when slow start ended over several streams: "at
// 0.10 s in every stream" or "at 0.10-0.25 s across the streams" (to the
// hundredth of a second), or "" when no stream's ended.
func (df *DirectionFigures) SlowStartEnds() string {
	if df == nil || df.SlowStartLast <= 0 {
		return ""
	}
	first, last := fmt.Sprintf("%.2f", df.SlowStartFirst), fmt.Sprintf("%.2f", df.SlowStartLast)
	if first == last {
		return "at " + last + " s in every stream"
	}
	return "at " + first + "-" + last + " s across the streams"
}

// pathMTU is a sending stream's path MTU: the last TCP_INFO's, else the
// socket's.
func pathMTU(s *result.Stream) int {
	if s.TCPInfo != nil && s.TCPInfo.PMTU > 0 {
		return int(s.TCPInfo.PMTU)
	}
	return s.Socket.MTU
}

func us(v uint32) time.Duration { return time.Duration(v) * time.Microsecond }

// finite turns NaN and infinities into 0 for JSON.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
