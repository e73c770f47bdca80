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
type WindowArithmetic struct {
	WindowBytes uint64        `json:"window_bytes"` // the largest advertised window, summed over streams
	RTT         time.Duration `json:"rtt_ns"`       // the baseline RTT
	BoundBps    float64       `json:"bound_bps"`    // window × 8 ÷ RTT
	GoodputBps  float64       `json:"goodput_bps"`
	// Limited says the goodput reached WindowReached of the bound: the
	// window set the rate.
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
		RTT:         us(df.BaselineRTTus),
		GoodputBps:  df.GoodputBps,
	}
	w.BoundBps = WindowRate(float64(w.WindowBytes), w.RTT)
	w.Limited = w.BoundBps > 0 && df.GoodputBps >= WindowReached*w.BoundBps
	return w, true
}

// String is "window ÷ RTT: 64.0 KBytes ÷ 215.00 ms = 2.44 Mbits/sec; the
// stream ran at 2.40 Mbits/sec (98%): the window was the limit".
func (w WindowArithmetic) String() string {
	size := strings.TrimSpace(units.FormatTransfer(float64(w.WindowBytes), units.AdaptiveBytes))
	s := fmt.Sprintf("window ÷ RTT: %s ÷ %.2f ms = %s; the goodput was %s (%.0f%%)", size,
		float64(w.RTT)/float64(time.Millisecond), strings.TrimSpace(units.FormatRate(w.BoundBps, 'a')),
		strings.TrimSpace(units.FormatRate(w.GoodputBps, 'a')), 100*w.GoodputBps/w.BoundBps)
	if w.Limited {
		s += ": the window was the limit"
	}
	return s
}

// LimitedNote explains, for a window-limited direction, why TCP_INFO's
// limited-time shares can name the window for only part of the time: the
// kernel counts a moment as window-limited only while a send waits on
// the window, not the round trip the window then spends in flight.
const LimitedNote = "the kernel counts only the moments a send waited on the window; the arithmetic above shows the window set the rate"
