package emit

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/udpmon"
	"github.com/wireperf/wireperf/internal/units"
)

// UDPMonTable writes a sweep as a text table, one row per (size,
// spacing) point, as the points complete: Header, then Row for each,
// then Footer with the loss verdicts and the failed points. Write does
// all three for a finished sweep.
type UDPMonTable struct {
	W   io.Writer
	Opt Options
}

const udpmonColumns = "%6s %9s %9s %9s %9s %9s %9s %8s %6s %7s %8s %8s %10s %10s %9s %9s"

// Header writes the column heads.
func (t *UDPMonTable) Header(sw *udpmon.Sweep) error {
	var b strings.Builder
	dir := "client → server"
	if sw.Reverse {
		dir = "server → client (--reverse)"
	}
	fmt.Fprintf(&b, "UDPmon sweep against %s, %s, %d datagrams per point\n", sw.Server, dir, sw.Count)
	fmt.Fprintf(&b, "wire rate = (payload + %d framing bytes) × 8 ÷ spacing; rOWD = one-way delay − its minimum; kern%% = system+softirq+irq of the busiest CPU\n", udpmon.WireOverhead)
	fmt.Fprintf(&b, udpmonColumns+"\n", "size", "spacing", "achieved", "gap p99", "sent Mb/s", "recv Mb/s", "user Mb/s", "loss %", "reord", "jit ms", "rOWD p50", "p99 µs", "snd kern%", "rcv kern%", "rcv irqs", "RcvbufErr")
	return t.write(b.String())
}

// Row writes one point.
func (t *UDPMonTable) Row(p *udpmon.Point) error {
	dur := func(ns float64) string {
		if ns <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fus", ns/1e3)
	}
	mbit := func(bps float64) string {
		if bps <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", bps/1e6)
	}
	spacing := "0"
	if p.Spacing > 0 {
		spacing = fmt.Sprintf("%.2fus", float64(p.Spacing)/float64(time.Microsecond))
	}
	if p.Error != "" && p.Sent == 0 {
		return t.write(fmt.Sprintf("%6d %9s  failed: %s\n", p.Size, spacing, p.Error))
	}
	owd50, owd99 := "-", "-"
	if o := p.RelativeOWD; o != nil {
		owd50, owd99 = fmt.Sprintf("%.1f", o.P50), fmt.Sprintf("%.1f", o.P99)
	}
	kern := func(h string, pct float64) string {
		if h == "" {
			return "-"
		}
		return fmt.Sprintf("%.1f %s", pct, h)
	}
	sh, sp := udpmon.KernelPercent(p.SenderHost)
	rh, rp := udpmon.KernelPercent(p.ReceiverHost)
	rcvbuf := "-"
	if p.ReceiverSNMP != nil {
		rcvbuf = fmt.Sprint(p.ReceiverSNMP.RcvbufErrors)
	}
	irqs := "-"
	if p.ReceiverHost != nil && len(p.ReceiverHost.Interrupts) > 0 {
		irqs = fmt.Sprint(udpmon.InterruptTotal(p.ReceiverHost))
	}
	achieved := dur(p.AchievedSpacingNs)
	if p.SpacingNotHeld {
		achieved += "!"
	}
	row := fmt.Sprintf(udpmonColumns, fmt.Sprint(p.Size), spacing, achieved, dur(p.AchievedSpacingP99Ns),
		mbit(p.SentWireBps), mbit(p.RecvWireBps), mbit(p.RecvUserBps), fmt.Sprintf("%.3f", p.LossPercent),
		fmt.Sprint(p.Reordered), fmt.Sprintf("%.3f", p.JitterMs), owd50, owd99, kern(sh, sp), kern(rh, rp), irqs, rcvbuf)
	if p.Error != "" {
		row += "  (failed: " + p.Error + ")"
	}
	return t.write(row + "\n")
}

// Footer writes where each point's lost datagrams were dropped, and the
// failed points.
func (t *UDPMonTable) Footer(sw *udpmon.Sweep) error {
	var b strings.Builder
	for _, p := range sw.Points {
		if a := p.LossAttribution; a != nil && a.Lost > 0 {
			fmt.Fprintf(&b, "size %d, spacing %v: %s\n", p.Size, p.Spacing, a.Verdict)
		}
	}
	for _, p := range sw.Points {
		if p.SpacingNotHeld {
			fmt.Fprintf(&b, "size %d, spacing %v: WARNING: the sender could not hold the spacing: it sent every %.2f µs on average (p99 %.2f µs); the rates are at the achieved spacing\n",
				p.Size, p.Spacing, p.AchievedSpacingNs/1e3, p.AchievedSpacingP99Ns/1e3)
		}
	}
	for _, p := range sw.Points {
		if p.Error != "" {
			fmt.Fprintf(&b, "size %d, spacing %v: FAILED: %s\n", p.Size, p.Spacing, p.Error)
		}
	}
	if sw.Lab != "" {
		fmt.Fprintln(&b, sw.Lab)
	}
	for _, w := range sw.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	fmt.Fprintf(&b, "%s in %.1f s", units.Count(len(sw.Points), "point"), sw.Seconds)
	if sw.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", sw.Failed)
	}
	b.WriteString("; --json has each point's CPU split per CPU, interrupt lines and histograms\n")
	return t.write(b.String())
}

// Write renders a finished sweep.
func (t *UDPMonTable) Write(sw *udpmon.Sweep) error {
	if err := t.Header(sw); err != nil {
		return err
	}
	for i := range sw.Points {
		if err := t.Row(&sw.Points[i]); err != nil {
			return err
		}
	}
	return t.Footer(sw)
}

func (t *UDPMonTable) write(s string) error {
	if t.Opt.Title != "" {
		var b strings.Builder
		for line := range strings.Lines(s) {
			b.WriteString(inert(t.Opt.Title) + ":  " + line)
		}
		s = b.String()
	}
	_, err := io.WriteString(t.W, s)
	return err
}
