package advise

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// WriteText writes the report for people: what was measured, the
// verdict, and what to do.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("wireperf advise %s, %s", r.Target, r.Direction)
	line("")
	line("Baseline RTT  %s (least of %d: %s)", ms(us(r.BaselineRTTus)), len(r.Probes), probeList(r.Probes))
	line("              %s", r.ProbeMethod)
	line("Path          MTU %s, MSS %s", intOr(r.PathMTU), intOr(r.MSS))
	for _, h := range []Host{r.Sender, r.Receiver} {
		what := "sends"
		if h.Role == r.Receiver.Role {
			what = "receives"
		}
		line("%-13s %s", capital(h.Role), h.describe(what))
	}
	line("")
	for _, run := range []*Measurement{&r.Single, r.Multi} {
		if run != nil {
			line("%-13s %s", units.Count(run.Streams, "stream"), run.describe())
		}
	}
	if len(r.StreamSteps) > 1 {
		line("Streams tried %s", r.stepsText())
	}
	if r.TestSeconds > 0 {
		how := "chosen from the RTT and slow start"
		if r.LengthGiven {
			how = "as given (-t)"
		}
		line("Test length   %.0f s each, %s", r.TestSeconds, how)
	}
	bn := fmt.Sprintf("%s (%s)", rate(r.BottleneckBps), r.BottleneckSource)
	if t := r.Train; t != nil {
		line("Packet train  %s", t.describe())
	}
	if r.BottleneckSource != "measured" {
		bn += ", " + lineRateArithmetic(r.BottleneckBps, r.PathMTU, r.IdealBps)
	}
	if r.BottleneckLowerBound != "" {
		bn += ", a lower bound: " + r.BottleneckLowerBound
	}
	line("Bottleneck    %s", bn)
	line("BDP           %s × %s = %s", rate(r.BottleneckBps), ms(us(r.BaselineRTTus)), size(r.BDPBytes))
	line("")
	line("Verdict: %s", r.Verdict.Summary)
	for _, d := range r.Verdict.Details {
		line("  - %s", d)
	}
	line("")
	line("What to do:")
	for _, s := range r.Advice.Steps {
		line("  - %s", s)
	}
	if r.Advice.ExpectedBps > 0 {
		line("Expected afterwards: about %s for one stream", rate(r.Advice.ExpectedBps))
	}
	if len(r.Advice.Notes) > 0 {
		line("")
		line("Why:")
		for _, n := range r.Advice.Notes {
			line("  - %s", n)
		}
	}
	if r.Lab != "" {
		line("")
		line("%s", r.Lab)
	}
	for _, wn := range r.Warnings {
		line("")
		line("WARNING: %s", wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (h Host) describe(what string) string {
	var parts []string
	if h.Address != "" {
		parts = append(parts, h.Address)
	}
	parts = append(parts, what)
	if l := h.Limits; l != nil {
		parts = append(parts, fmt.Sprintf("tcp_rmem %s, tcp_wmem %s, rmem_max %s, wmem_max %s",
			triple(l.TCPRmem), triple(l.TCPWmem), intOr64(l.RmemMax), intOr64(l.WmemMax)))
		if cc := h.congestion(); cc != "" {
			parts = append(parts, cc)
		}
		if q := qdiscText(l); q != "" {
			parts = append(parts, q)
		}
	} else {
		parts = append(parts, "kernel limits unknown (not reported)")
	}
	if h.Socket != nil && h.Socket.MTU > 0 {
		parts = append(parts, fmt.Sprintf("route MTU %d", h.Socket.MTU))
	}
	return strings.Join(parts, ", ")
}

// congestion names the congestion control the test's socket ran, and
// the host's default (the sysctl) beside it where that differs: the
// report's tests ran -C's algorithm, not the default.
func (h Host) congestion() string {
	var def, tested string
	if h.Limits != nil {
		def = h.Limits.Congestion
	}
	if h.Socket != nil {
		tested = h.Socket.Congestion
	}
	switch {
	case tested == "":
		return def
	case def == "" || def == tested:
		return tested + " (tested)"
	}
	return tested + " (tested; the host's default is " + def + ")"
}

// lineRateArithmetic states the ideal goodput with the sum that gives it:
// "941.5 Mbit/s of TCP goodput by line-rate arithmetic (1448/1538 × 1
// Gbit/s)", each figure precise enough that the sum can be checked; a
// packet train's rate is a measurement (1.002 Gbit/s gives 943.4).
func lineRateArithmetic(rateBps float64, mtu int, ideal float64) string {
	mtu = mtuOr(mtu)
	return fmt.Sprintf("%s of TCP goodput by line-rate arithmetic (%d/%d × %s)",
		exactRate(ideal), mtu-figures.TCPIPHeaderBytes, mtu+figures.EthernetOverhead, exactRate(rateBps))
}

// exactRate prints a rate to four significant digits, trailing zeros
// dropped: 941.5 Mbit/s, 1 Gbit/s, 1.002 Gbit/s.
func exactRate(bps float64) string {
	unit, div := "bit/s", 1.0
	switch {
	case bps >= 1e9:
		unit, div = "Gbit/s", 1e9
	case bps >= 1e6:
		unit, div = "Mbit/s", 1e6
	case bps >= 1e3:
		unit, div = "kbit/s", 1e3
	}
	return strconv.FormatFloat(bps/div, 'g', 4, 64) + " " + unit
}

// qdiscText names the root qdisc of the interface the test ran over, or
// failing that the default new interfaces get (net.core.default_qdisc),
// said as such: it need not be the one the test met.
func qdiscText(l *result.Limits) string {
	switch {
	case l.Qdisc != "" && l.Interface != "":
		return l.Interface + " qdisc " + l.Qdisc
	case l.Qdisc != "":
		return "qdisc " + l.Qdisc
	case l.DefaultQdisc != "":
		return "default qdisc " + l.DefaultQdisc
	}
	return ""
}

func (r *Measurement) describe() string {
	parts := []string{rate(r.GoodputBps)}
	if t := r.TCP; t != nil {
		parts = append(parts, units.Count(int(t.Retransmits), "retransmit"))
		if l := t.Limited; l != nil {
			parts = append(parts, fmt.Sprintf("limited by: receiver window %s, sender buffer %s, network %s",
				pct(l.Rwnd), pct(l.Sndbuf), pct(l.Network)))
		}
		if t.EfficiencyPercent != nil {
			parts = append(parts, "TCP Efficiency "+pctp(t.EfficiencyPercent))
		}
		if t.BufferDelayPercent != nil {
			parts = append(parts, fmt.Sprintf("Buffer Delay %.1f%%", *t.BufferDelayPercent))
		}
		if t.TransferTimeRatio != nil {
			parts = append(parts, fmt.Sprintf("Transfer Time Ratio %.2f", *t.TransferTimeRatio))
		}
		if ss := t.SlowStart; ss != nil {
			parts = append(parts, slowStartText(ss))
		} else if ends := t.SlowStartEnds(); ends != "" {
			parts = append(parts, "slow start ended "+ends)
		}
	}
	s := strings.Join(parts, ", ")
	if r.Error != "" {
		s += " (test error: " + r.Error + ")"
	}
	return s
}

func slowStartText(ss *figures.SlowStartFigures) string {
	if !ss.Ended {
		return fmt.Sprintf("still in slow start at %.2f s", ss.Duration)
	}
	return fmt.Sprintf("slow start ended at %.2f s (%s)", ss.End, ss.Cause)
}

// probeList prints the probes' RTTs in the unit the baseline is printed
// in (ms does the same): µs below a millisecond, where a tenth of a
// millisecond would print every loopback probe as 0.0.
func probeList(ps []Probe) string {
	least := uint32(0)
	for i, p := range ps {
		if i == 0 || p.RTTus < least {
			least = p.RTTus
		}
	}
	var s []string
	for _, p := range ps {
		if least < 1000 {
			s = append(s, strconv.FormatUint(uint64(p.RTTus), 10))
		} else {
			s = append(s, strconv.FormatFloat(float64(p.RTTus)/1e3, 'f', 1, 64))
		}
	}
	if least < 1000 {
		return strings.Join(s, " ") + " µs"
	}
	return strings.Join(s, " ") + " ms"
}

func triple(t [3]int64) string {
	if t == [3]int64{} {
		return "unknown"
	}
	return fmt.Sprintf("%d %d %d", t[0], t[1], t[2])
}

func intOr64(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return strconv.FormatInt(n, 10)
}

func intOr(n int) string {
	if n <= 0 {
		return "unknown"
	}
	return strconv.Itoa(n)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// stepsText lists the multi-stream tests: "4: 80.8 Mbits/sec
// (window-limited) → 16: 322 Mbits/sec".
func (r *Report) stepsText() string {
	parts := make([]string, 0, len(r.StreamSteps))
	for _, s := range r.StreamSteps {
		p := fmt.Sprintf("%d: %s", s.Streams, rate(s.GoodputBps))
		if s.WindowLimited {
			p += " (window-limited)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " → ")
}

func (t *Train) describe() string {
	if t.Error != "" {
		return "failed: " + t.Error
	}
	s := fmt.Sprintf("%d datagrams of %d B sent at %s, %d arrived at %s (on the wire)",
		t.Datagrams, TrainSize, rate(t.SentWireBps), t.Received, rate(t.RecvWireBps))
	if t.CapacityBps == 0 {
		s += ": not sent fast enough to measure the path"
	}
	return s
}
