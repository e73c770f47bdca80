package figures

import (
	"fmt"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// WindowReached is the share of window ÷ RTT at which a stream ran at
// what its window allows: TCP cannot carry more than a window per round
// trip, so a stream that close to it was held by the window, whatever the
// kernel's limited-time counters say.
const WindowReached = 0.8

// WindowArithmetic is a direction's window ÷ RTT: the most the largest
// window the receiver advertised carries per round trip, against what the
// streams reached.
//
// The RTT is the mean the sender measured during the test, not the
// baseline: a window is in flight for the round trip the packets actually
// took, queueing and the receiver's delayed ACKs included, so W ÷ mean RTT
// is the rate a window-limited stream holds (on 19 ms / 622m, -w 256K:
// 340 KB ÷ 19.52 ms = 142.7 Mbit/s against 141 read; ÷ the 19.10 ms
// baseline it would be 146). The baseline is kept beside it.
type WindowArithmetic struct {
	WindowBytes uint64        `json:"window_bytes"`    // the largest advertised window, summed over streams
	RTT         time.Duration `json:"rtt_ns"`          // the RTT the bound uses: the mean, or the baseline without one
	BaselineRTT time.Duration `json:"baseline_rtt_ns"` // the smallest RTT seen
	MeanRTT     time.Duration `json:"mean_rtt_ns,omitempty"`
	BoundBps    float64       `json:"bound_bps"` // window × 8 ÷ RTT
	GoodputBps  float64       `json:"goodput_bps"`
	// SteadyBps is the goodput after slow start (one stream whose slow
	// start ended): the rate the window held, where a short test's total
	// also carries the ramp.
	SteadyBps float64 `json:"steady_goodput_bps,omitempty"`
	// Limited says the goodput, or the steady goodput, reached
	// WindowReached of the bound: the window set the rate.
	Limited bool `json:"limited"`
}

// Window is the direction's window arithmetic; ok is false without a
// window or an RTT.
func (df *DirectionFigures) Window() (WindowArithmetic, bool) {
	if df == nil || df.MaxSndWnd == 0 || df.BaselineRTTus == 0 {
		return WindowArithmetic{}, false
	}
	w := WindowArithmetic{
		WindowBytes: df.MaxSndWnd * uint64(max(df.Streams, 1)),
		BaselineRTT: us(df.BaselineRTTus),
		GoodputBps:  df.GoodputBps,
	}
	w.RTT = w.BaselineRTT
	if df.MeanRTTus >= df.BaselineRTTus {
		w.MeanRTT = us(df.MeanRTTus)
		w.RTT = w.MeanRTT
	}
	if ss := df.SlowStart; df.Streams <= 1 && ss != nil && ss.Ended && ss.Share < 1 && ss.RateAfter > 0 {
		w.SteadyBps = ss.RateAfter
	}
	w.BoundBps = WindowRate(float64(w.WindowBytes), w.RTT)
	w.Limited = w.BoundBps > 0 && max(df.GoodputBps, w.SteadyBps) >= WindowReached*w.BoundBps
	return w, true
}

// String is "window ÷ RTT: 340 KBytes ÷ 19.52 ms (mean; baseline 19.10
// ms) = 143 Mbits/sec; the goodput was 136 Mbits/sec (95%), 141
// Mbits/sec after slow start (99%): the window was the limit".
func (w WindowArithmetic) String() string {
	size := strings.TrimSpace(units.FormatTransfer(float64(w.WindowBytes), units.AdaptiveBytes))
	rtt := fmt.Sprintf("%.2f ms", ms(w.RTT))
	if w.MeanRTT > 0 {
		rtt += fmt.Sprintf(" (mean; baseline %.2f ms)", ms(w.BaselineRTT))
	}
	s := fmt.Sprintf("window ÷ RTT: %s ÷ %s = %s; the goodput was %s (%.0f%%)", size, rtt,
		strings.TrimSpace(units.FormatRate(w.BoundBps, 'a')),
		strings.TrimSpace(units.FormatRate(w.GoodputBps, 'a')), 100*w.GoodputBps/w.BoundBps)
	if w.SteadyBps > 0 {
		s += fmt.Sprintf(", %s after slow start (%.0f%%)", strings.TrimSpace(units.FormatRate(w.SteadyBps, 'a')), 100*w.SteadyBps/w.BoundBps)
	}
	if w.Limited {
		s += ": the window was the limit"
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// LimitedNote explains, for a window-limited direction, why TCP_INFO's
// limited-time shares can name the window for only part of the time: the
// kernel counts a moment as window-limited only while a send waits on
// the window, not the round trip the window then spends in flight.
const LimitedNote = "the kernel counts only the moments a send waited on the window; the arithmetic above shows the window set the rate"
