package emit

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// writeTCPInternals writes a TCP direction's internals at the end of the
// summary (docs/metrics.md, "TCP internals"): the limited-time breakdown,
// the RFC 6349 figures and when slow start ended. One flow's figures go
// under its tag, several flows' together under [SUM].
func writeTCPInternals(l *textLines, t *Text, r *result.Result, d result.Direction, bidir bool) {
	if isUDP(r.Spec) {
		return
	}
	tag := sumTag(d.SenderRole, bidir)
	if len(d.Flows) == 1 {
		tag = flowTag(d.Flows[0].ID, d.SenderRole, bidir)
	}
	df := figures.DirectionOf(d, bottleneckOf(r))
	if df == nil {
		for _, f := range d.Flows {
			if f.Sent != nil && f.Sent.TCPTimeline != nil && f.Sent.TCPTimeline.Unavailable != "" {
				l.add("%s TCP internals: %s", tag, f.Sent.TCPTimeline.Unavailable)
				return
			}
		}
		return
	}
	w, haveWindow := df.Window()
	if lt := df.Limited; lt != nil {
		note := ""
		if haveWindow && w.Limited && lt.Rwnd+lt.Sndbuf < 0.5 {
			note = " (" + figures.LimitedNote + ")"
		}
		l.add("%s TCP busy %.2f s, limited by: receiver window %.1f%%, sender buffer %.1f%%, network %.1f%%%s",
			tag, float64(lt.BusyUs)/1e6, 100*lt.Rwnd, 100*lt.Sndbuf, 100*lt.Network, note)
	}
	if haveWindow && w.BoundBps < 2*w.GoodputBps {
		l.add("%s %s", tag, w)
	}
	l.add("%s RFC 6349: %s", tag, strings.Join(rfc6349Parts(df, t.Opt.Format), ", "))
	if s := slowStartLine(df); s != "" {
		l.add("%s %s", tag, s)
	}
}

// bottleneckOf is the bottleneck rate the client was given, if any.
func bottleneckOf(r *result.Result) float64 {
	if r.Local.BottleneckBps > 0 {
		return r.Local.BottleneckBps
	}
	return r.Remote.BottleneckBps
}

func rfc6349Parts(df *figures.DirectionFigures, f units.Format) []string {
	var parts []string
	if e := df.EfficiencyPercent; e != nil {
		parts = append(parts, fmt.Sprintf("TCP Efficiency %.2f%% (%s sent, %s retransmitted)", *e,
			strings.TrimSpace(units.FormatTransfer(float64(df.BytesSent), f)),
			strings.TrimSpace(units.FormatTransfer(float64(df.BytesRetrans), f))))
	} else {
		parts = append(parts, "TCP Efficiency unknown")
	}
	if b := df.BufferDelayPercent; b != nil {
		parts = append(parts, fmt.Sprintf("Buffer Delay %.1f%% (mean RTT %s over baseline %s)", *b,
			strings.TrimSpace(rtt(df.MeanRTTus)), strings.TrimSpace(rtt(df.BaselineRTTus))))
	} else if df.MeanRTTus > 0 && df.BaselineRTTus > 0 {
		parts = append(parts, fmt.Sprintf("Buffer Delay not given (baseline RTT %s, under the %s of any network path; mean RTT %s)",
			strings.TrimSpace(rtt(df.BaselineRTTus)), figures.MinBufferDelayBaseline, strings.TrimSpace(rtt(df.MeanRTTus))))
	} else {
		parts = append(parts, "Buffer Delay unknown")
	}
	if ttr := df.TransferTimeRatio; ttr != nil {
		parts = append(parts, fmt.Sprintf("Transfer Time Ratio %.2f (ideal %s at a %s bottleneck)", *ttr,
			strings.TrimSpace(units.FormatRate(df.IdealBps, f)), strings.TrimSpace(units.FormatRate(df.BottleneckBps, f))))
	} else {
		parts = append(parts, "Transfer Time Ratio needs --bottleneck RATE")
	}
	return parts
}

// slowStartLine says when slow start ended and what that did to a short
// test's figure: a test not much longer than its slow start reads low.
func slowStartLine(df *figures.DirectionFigures) string {
	ss := df.SlowStart
	if ss == nil {
		if ends := df.SlowStartEnds(); ends != "" {
			return "Slow start ended " + ends
		}
		return ""
	}
	if !ss.Ended && df.Limited != nil && df.Limited.Rwnd+df.Limited.Sndbuf >= figures.LimitedShare {
		return fmt.Sprintf("Slow start never ended (no loss, ssthresh never set): the receiver's window or the sender's buffer, "+
			"not the network, capped the sender for the %.2f s test", ss.Duration)
	}
	if !ss.Ended {
		return fmt.Sprintf("Slow start had not ended when the sender stopped at %.2f s: the whole test measured TCP's ramp-up, "+
			"not the path's steady rate; test for longer (-t)", ss.Duration)
	}
	s := fmt.Sprintf("Slow start ended at %.2f s (%s, cwnd %s), %.0f%% of the %.2f s test", ss.End, ss.Cause,
		strings.TrimSpace(window(ss.CwndBytes)), 100*ss.Share, ss.Duration)
	if ss.RateBefore > 0 && ss.RateAfter > 0 {
		s += fmt.Sprintf(": %s before, %s after", strings.TrimSpace(units.FormatRate(ss.RateBefore, units.AdaptiveBits)),
			strings.TrimSpace(units.FormatRate(ss.RateAfter, units.AdaptiveBits)))
	}
	if ss.Share >= 0.2 {
		s += fmt.Sprintf("; test longer, or leave it out with -O %.0f", max(1, ss.End+0.5))
	}
	return s
}
