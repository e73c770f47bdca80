package advise

import (
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// signals are what the rules weigh, read once from the evidence.
type signals struct {
	e     Evidence
	s     Measurement
	tcp   *figures.DirectionFigures // nil without TCP_INFO
	lt    *figures.LimitedTime
	ss    *figures.SlowStartFigures
	rtt   time.Duration
	ideal float64
	// reached is the single stream's goodput as a share of the ideal.
	reached    float64
	belowIdeal bool
	// cpuHost is the busier host's role, cpu its percent of a core.
	cpuHost string
	cpu     float64
	// reach says how far one stream got, for the details.
	reach string
	// capped: the advertised window had stopped growing (or no timeline
	// tells). A window that autotuning was still opening limits only a
	// test too short for the path.
	capped bool
	// steady is the stream's rate after slow start, when known.
	steady float64
	// windowBound is the most the largest advertised window carries per
	// RTT (window ÷ RTT).
	windowBound float64
	// atWindow: the stream ran at what its window allows, with the window
	// below the path's rate.
	atWindow bool
	// earlyExit: slow start ended without loss at a window far below the
	// BDP. HyStart took a rise in delay for congestion, and CUBIC grows
	// slowly from there at a long RTT.
	earlyExit bool
	// slowStartHeavy: slow start took most of the test, or never ended.
	slowStartHeavy bool
	lossy          bool
	// overshootOnly: the stream lost packets, but none in its steady span
	// (Steady) and no router counted a drop but its queue's: the losses were slow start's overshoot of the
	// bottleneck's queue and the recovery from it.
	overshootOnly bool
	// probingFull: after slow start the stream held the bottleneck's
	// rate (PathFullShare) losing no more than a stream probing a full
	// queue does (ProbeLossShare), and no router counted a drop other
	// than its queue's.
	probingFull bool
}

func signalsOf(e Evidence) *signals {
	c := &signals{e: e, s: e.Single, ideal: e.Ideal(), rtt: e.BaselineRTT}
	s := c.s
	if c.ideal > 0 {
		c.reached = s.GoodputBps / c.ideal
	}
	if c.tcp = s.TCP; c.tcp != nil {
		c.lt, c.ss = c.tcp.Limited, c.tcp.SlowStart
		if c.rtt <= 0 {
			c.rtt = us(c.tcp.BaselineRTTus)
		}
	}
	c.belowIdeal = c.ideal <= 0 || c.reached < FullShare
	c.cpuHost, c.cpu = e.Sender.Role, s.SenderCPU
	if s.ReceiverCPU > s.SenderCPU {
		c.cpuHost, c.cpu = e.Receiver.Role, s.ReceiverCPU
	}
	c.reach = fmt.Sprintf("one stream reached %s, %s of the %s %s", rate(s.GoodputBps), pct(c.reached), rate(c.ideal), e.idealWhat())
	c.capped = c.tcp == nil || c.tcp.WindowPlateau == nil || *c.tcp.WindowPlateau
	c.steady = s.GoodputBps
	if ss := c.ss; ss != nil && ss.Ended && ss.RateAfter > c.steady {
		c.steady = ss.RateAfter
	}
	if c.tcp != nil {
		c.windowBound = figures.WindowRate(float64(c.tcp.MaxSndWnd), c.rtt)
	}
	c.atWindow = c.windowBound > 0 && c.steady >= WindowReached*c.windowBound && (c.ideal <= 0 || c.windowBound < FullShare*c.ideal)
	if ss := c.ss; ss != nil {
		c.slowStartHeavy = !ss.Ended || ss.Share >= SlowStartShare
		c.earlyExit = ss.Ended && ss.Cause == result.SlowStartSsthresh && c.tcp.Retransmits == 0 &&
			e.BDP() > 0 && float64(ss.CwndBytes) < e.BDP()/4
	}
	if t := c.tcp; t != nil {
		c.lossy = t.Retransmits > 0 && t.CwndReductions > 0 && t.BytesSent > 0 &&
			float64(t.BytesRetrans) >= LossShare*float64(t.BytesSent)
	}
	// A router that dropped packets other than at its full queue makes
	// the path lossy, whatever the stream's span shows: a stream held to a
	// few Mbit/s by random loss may see none in a few seconds.
	queueOnly := e.PathDrops == nil || e.PathDrops.Other == 0
	if st := s.Steady; st != nil && c.lossy && queueOnly {
		c.overshootOnly = st.Retrans == 0 && st.Before > 0
		c.probingFull = st.Retrans > 0 && st.RetransBytes > 0 && st.LossShare() <= ProbeLossShare &&
			c.ideal > 0 && st.RateBps >= PathFullShare*c.ideal
	}
	return c
}

// A rule names one limit: when it holds, and what else the verdict
// says.
type rule struct {
	limit string
	holds func(c *signals) bool
	say   func(c *signals, v *Verdict)
}

// dropsDetail says where the path's router dropped packets, when it can
// tell.
func dropsDetail(d *PathDrops) string {
	return fmt.Sprintf("over advise's tests (the packet train's included), in the sender's direction %s dropped %s packets at its queue (the bottleneck full) and %s otherwise (random loss, memory, its input queue)",
		d.Where, units.Thousands(int64(d.Queue)), units.Thousands(int64(d.Other)))
}

// rules in the order Classify tries them, which matters: a stream at the
// bottleneck is network-limited whatever else the counters say; then the
// windows, whose counters name the limit directly; then the CPU; then a
// test too short for its slow start; then loss; then a sender that had
// nothing to send; and last, no limit on a host.
var rules = []rule{
	{LimitNetwork, capacityKnown(fillsThePath), sayFillsThePath},
	{LimitNetwork, capacityKnown(fullAfterOvershoot), sayFullAfterOvershoot},
	{LimitNetwork, capacityKnown(fullWhileProbing), sayFullWhileProbing},
	{LimitReceiverWindow, receiverWindowLimited, sayReceiverWindow},
	{LimitSenderBuffer, senderBufferLimited, saySenderBuffer},
	{LimitCPU, cpuLimited, sayCPU},
	{LimitSlowStart, slowStartEndedEarly, saySlowStartEndedEarly},
	{LimitSlowStart, slowStartTookTheTest, saySlowStartTookTheTest},
	{LimitSlowStart, steadyNotReached, saySteadyNotReached},
	{LimitCongestion, lossLimited, sayLoss},
	{LimitApplication, applicationLimited, sayApplication},
	{LimitUnknown, func(c *signals) bool { return c.tcp == nil }, sayNoTCPInfo},
	{LimitUnknown, func(c *signals) bool { return c.e.LowerBound != "" }, sayLowerBound},
	{LimitNetwork, func(*signals) bool { return true }, sayNoHostLimit},
}

// capacityKnown holds a rule that says the path is full to a bottleneck
// that is the path's: one that is only a lower bound the host limited
// (Evidence.LowerBound) shows no path full.
func capacityKnown(holds func(*signals) bool) func(*signals) bool {
	return func(c *signals) bool { return c.e.LowerBound == "" && holds(c) }
}

// firstRule is the first of rules that holds; nil when none does.
func firstRule(c *signals) *rule {
	for i := range rules {
		if rules[i].holds(c) {
			return &rules[i]
		}
	}
	return nil
}

// firstLimit is the limit the first rule that holds names.
func firstLimit(c *signals) string {
	if r := firstRule(c); r != nil {
		return r.limit
	}
	return LimitUnknown
}

func fillsThePath(c *signals) bool { return c.ideal > 0 && !c.belowIdeal }

func sayFillsThePath(c *signals, v *Verdict) {
	v.Summary = fmt.Sprintf("network-limited: one stream fills the path (%s, %s of %s)", rate(c.s.GoodputBps), pct(c.reached), rate(c.ideal))
	if t := c.tcp; t != nil && t.Retransmits > 0 {
		v.Details = append(v.Details, fmt.Sprintf("%s (TCP Efficiency %s): the bottleneck's queue overflowed now and then, as it does when TCP fills a path",
			units.Count(int(t.Retransmits), "retransmit"), pctp(t.EfficiencyPercent)))
	}
}

// fullAfterOvershoot: the stream's only losses were slow start's
// overshoot, and after it the stream ran at the bottleneck's rate. Its
// mean over the whole test is below that only by slow start's share: the
// path is full.
func fullAfterOvershoot(c *signals) bool {
	return c.overshootOnly && c.ideal > 0 && c.s.Steady.RateBps >= FullShare*c.ideal
}

func sayFullAfterOvershoot(c *signals, v *Verdict) {
	st := c.s.Steady
	v.Summary = fmt.Sprintf("network-limited (path full): after slow start, one stream held %s, %s of %s, from %.1f to %.1f s without a retransmit",
		rate(st.RateBps), pct(st.RateBps/c.ideal), rate(c.ideal), st.From, st.To)
	v.Details = append(v.Details, overshootDetail(c), c.reach+", slow start included")
}

// overshootDetail says where the losses were.
func overshootDetail(c *signals) string {
	st, cc := c.s.Steady, c.e.SenderCongestion()
	if cc == "" {
		cc = "TCP"
	}
	end := ""
	if ss := c.ss; ss != nil && ss.Ended {
		end = fmt.Sprintf(" (slow start ended at %.1f s)", ss.End)
	}
	return fmt.Sprintf("all %s segments retransmitted were before %.1f s%s: %s's slow start overshot the bottleneck's queue, as it does by design; "+
		"they say nothing of the path's steady state", units.Thousands(int64(st.Before)), st.From, end, cc)
}

// fullAfterSlowStart: the path was full after slow start, with or
// without a full queue's losses.
func fullAfterSlowStart(c *signals) bool { return fullAfterOvershoot(c) || fullWhileProbing(c) }

// fullWhileProbing: after slow start the stream ran at the bottleneck's
// rate and lost a little all along, as an algorithm that probes for
// bandwidth does at a full queue (BBRv1 keeps up to twice the BDP in
// flight). The losses cost no throughput: the path is full.
func fullWhileProbing(c *signals) bool { return c.probingFull }

func sayFullWhileProbing(c *signals, v *Verdict) {
	st := c.s.Steady
	v.Summary = fmt.Sprintf("network-limited (path full): after slow start, one stream held %s, %s of %s, from %.1f to %.1f s, losing %s of its bytes",
		mbits(st.RateBps), pct(st.RateBps/c.ideal), mbits(c.ideal), st.From, st.To, pct2(st.LossShare()))
	cc := c.e.SenderCongestion()
	if cc == "" {
		cc = "TCP"
	}
	probe := "probing for more bandwidth overfilled the bottleneck's queue now and then"
	if isBBR(cc) {
		probe = "probing for more bandwidth every 8 round trips overfilled the bottleneck's queue"
	}
	v.Details = append(v.Details, fmt.Sprintf("%s segments retransmitted from %.1f to %.1f s (%s of the bytes sent; at most %s with the stream at %s or more of the path is a full queue's, not a lossy path's): "+
		"%s's %s; a loss rate that costs throughput keeps a stream below that",
		units.Thousands(int64(st.Retrans)), st.From, st.To, pct2(st.LossShare()), pct(ProbeLossShare), pct(PathFullShare), cc, probe))
	if st.Before > 0 {
		end := ""
		if ss := c.ss; ss != nil && ss.Ended {
			end = fmt.Sprintf(" (slow start ended at %.1f s)", ss.End)
		}
		v.Details = append(v.Details, fmt.Sprintf("%s segments retransmitted before %.1f s%s: slow start's overshoot", units.Thousands(int64(st.Before)), st.From, end))
	}
	v.Details = append(v.Details, c.reach+", slow start included")
}

// steadyNotReached: the losses were slow start's overshoot, and the
// stream had not come back to the bottleneck's rate when the test ended.
func steadyNotReached(c *signals) bool { return c.overshootOnly && c.belowIdeal }

func saySteadyNotReached(c *signals, v *Verdict) {
	st := c.s.Steady
	still := ""
	if st.Rising {
		still = ", still rising"
	}
	v.Summary = fmt.Sprintf("test too short: steady state not reached: after slow start's losses one stream ran at %s (%s of %s) from %.1f to %.1f s%s, without a retransmit",
		rate(st.RateBps), pct(st.RateBps/c.ideal), rate(c.ideal), st.From, st.To, still)
	v.Details = append(v.Details, overshootDetail(c), c.reach,
		"after a loss at a long RTT the window grows back over many round trips (CUBIC's takes tens of seconds at 215 ms): a longer test shows the steady state")
}

// receiverWindowLimited: a window limit shows as time limited by it, or
// as a stream that reached what its window allows (window ÷ RTT) after
// slow start; either way with a window that had stopped growing. (BBR
// paces, so a window-bound BBR sender is often waiting on its pacing
// timer rather than on the window, and shows little rwnd-limited time.)
func receiverWindowLimited(c *signals) bool {
	lt := c.lt
	return c.capped && lt != nil && (lt.Rwnd >= figures.LimitedShare && lt.Rwnd >= lt.Sndbuf || c.atWindow && lt.Sndbuf < figures.LimitedShare)
}

func sayReceiverWindow(c *signals, v *Verdict) {
	e := c.e
	v.Host = e.Receiver.Role
	if c.lt.Rwnd >= figures.LimitedShare {
		v.Summary = fmt.Sprintf("receiver-window-limited: %s's receive window held the sender back %s of the time", e.Receiver.Name(), pct(c.lt.Rwnd))
	} else {
		v.Summary = fmt.Sprintf("receiver-window-limited: one stream ran at what %s's receive window allows", e.Receiver.Name())
	}
	v.Details = append(v.Details, c.reach)
	if c.windowBound > 0 {
		when := "over the test"
		if ss := c.ss; ss != nil && ss.Ended && ss.RateAfter > 0 {
			when = "after slow start"
		}
		v.Details = append(v.Details, fmt.Sprintf("its largest advertised window, %s, over the %s RTT allows at most %s (window ÷ RTT); "+
			"the stream ran at %s %s; the path needs a window of %s (the BDP)",
			size(float64(c.tcp.MaxSndWnd)), ms(c.rtt), rate(c.windowBound), rate(c.steady), when, size(e.BDP())))
	}
}

func senderBufferLimited(c *signals) bool {
	return c.lt != nil && c.lt.Sndbuf >= figures.LimitedShare && c.capped
}

func saySenderBuffer(c *signals, v *Verdict) {
	v.Host = c.e.Sender.Role
	v.Summary = fmt.Sprintf("sender-buffer-limited: %s's send buffer was full %s of the time", c.e.Sender.Name(), pct(c.lt.Sndbuf))
	v.Details = append(v.Details, c.reach)
}

func cpuLimited(c *signals) bool { return c.cpu >= CPUBusy && c.belowIdeal }

func sayCPU(c *signals, v *Verdict) {
	v.Host = c.cpuHost
	v.Summary = fmt.Sprintf("CPU-limited: the %s used %.0f%% of a core", c.cpuHost, c.cpu)
	v.Details = append(v.Details, c.reach)
}

func slowStartEndedEarly(c *signals) bool { return c.earlyExit && c.belowIdeal }

func saySlowStartEndedEarly(c *signals, v *Verdict) {
	ss := c.ss
	v.Summary = fmt.Sprintf("slow-start-limited: slow start ended early, at %.1f s with a window of %s (the BDP is %s) and no loss; "+
		"the window grew slowly from there", ss.End, size(float64(ss.CwndBytes)), size(c.e.BDP()))
	v.Details = append(v.Details, c.reach,
		"a rise in RTT ends CUBIC's slow start (HyStart) before any loss; at a long RTT, CUBIC then takes many seconds to open the window")
}

func slowStartTookTheTest(c *signals) bool { return c.slowStartHeavy && c.belowIdeal }

func saySlowStartTookTheTest(c *signals, v *Verdict) {
	ss := c.ss
	if ss.Ended {
		v.Summary = fmt.Sprintf("slow-start-limited: slow start took %.1f s of the %.1f s test; the test is too short for this path, not held back by a host",
			ss.End, ss.Duration)
	} else {
		v.Summary = fmt.Sprintf("slow-start-limited: TCP was still opening its window when the %.1f s test ended; the test is too short for this path", ss.Duration)
	}
	v.Details = append(v.Details, c.reach)
	if ss.RateAfter > 0 {
		v.Details = append(v.Details, fmt.Sprintf("%s before slow start ended, %s after", rate(ss.RateBefore), rate(ss.RateAfter)))
	}
	if lt := c.lt; lt != nil && lt.Rwnd >= figures.LimitedShare {
		v.Details = append(v.Details, fmt.Sprintf("the receive window held the sender back %s of the time, but it was still growing: autotuning opens it about as fast as slow start opens the congestion window", pct(lt.Rwnd)))
	}
}

func lossLimited(c *signals) bool { return c.lossy && c.belowIdeal }

func sayLoss(c *signals, v *Verdict) {
	t := c.tcp
	v.Summary = fmt.Sprintf("congestion/loss-limited: %s and %s kept one stream at %s",
		units.Count(int(t.Retransmits), "retransmit"), units.Count(t.CwndReductions, "congestion-window reduction"), rate(c.s.GoodputBps))
	v.Details = append(v.Details, c.reach)
	if t.BytesSent > 0 {
		v.Details = append(v.Details, fmt.Sprintf("%s of the bytes sent were retransmitted (TCP Efficiency %s)",
			pct(float64(t.BytesRetrans)/float64(t.BytesSent)), pctp(t.EfficiencyPercent)))
	}
}

// applicationLimited: the sender had data in flight for too little of
// the test.
func applicationLimited(c *signals) bool {
	return c.tcp != nil && c.s.Seconds > 0 && c.lt != nil && float64(c.lt.BusyUs)/1e6 < IdleShare*c.s.Seconds
}

func sayApplication(c *signals, v *Verdict) {
	v.Host = c.e.Sender.Role
	v.Summary = fmt.Sprintf("application-limited: the sender had data in flight only %.1f s of %.1f s",
		float64(c.lt.BusyUs)/1e6, c.s.Seconds)
}

func sayNoTCPInfo(c *signals, v *Verdict) {
	v.Summary = "unknown: the sender reported no TCP_INFO (" + c.reach + ")"
}

func sayLowerBound(c *signals, v *Verdict) {
	v.Summary = fmt.Sprintf("unknown: the bottleneck, %s, is a lower bound the host limited: whether the path is full can't be told (%s)", rate(c.e.Bottleneck), c.reach)
	v.Details = append(v.Details, c.e.LowerBound)
}

func sayNoHostLimit(c *signals, v *Verdict) {
	v.Summary = fmt.Sprintf("network-limited: no host limit shows (%s)", c.reach)
}
