package rrul

import (
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/rrload"
	"github.com/wireperf/wireperf/internal/stats"
)

// assemble puts the flows and the probes on one axis whose zero is t0,
// the idle phase's start. loadStart is zero when the load never ran.
func assemble(cfg Config, t0, loadStart, loadEnd time.Time, flows *flowRun, probes []*probeRun) *result.RRUL {
	out := &result.RRUL{
		IdleSeconds: cfg.Idle.Seconds(), LoadSeconds: cfg.Load.Seconds(), AfterSeconds: cfg.After.Seconds(),
		StepSeconds: cfg.Step.Seconds(), Congestion: cfg.Flow.Congestion,
	}
	at := func(t time.Time) float64 { return t.Sub(t0).Seconds() }
	var errs []string
	if !loadStart.IsZero() {
		out.LoadStartSeconds, out.LoadEndSeconds = at(loadStart), at(loadEnd)
	} else {
		errs = append(errs, "the load did not run")
	}
	if fr := flows; fr != nil {
		out.Flows = flowFigures(fr, at, cfg.Step)
		for _, f := range out.Flows {
			if f.Direction == "up" {
				out.UpBitsPerSecond += f.BitsPerSecond
			} else {
				out.DownBitsPerSecond += f.BitsPerSecond
			}
		}
		if fr.err != nil {
			errs = append(errs, fmt.Sprintf("the flows: %v", fr.err))
		}
		if fr.res != nil {
			out.ServerCPU = higherCPU(out.ServerCPU, fr.res.Remote.CPU)
		}
	}
	hists := [3]*hdrhistogram.Histogram{}
	for i := range hists {
		hists[i] = hdrhistogram.New(1, int64(100*time.Second), 3)
	}
	for _, pr := range probes {
		p := result.RRULProbe{Class: pr.class.Name, TOS: pr.class.TOS}
		if pr.err != nil {
			p.Error = pr.err.Error()
			errs = append(errs, fmt.Sprintf("the %s probe: %v", pr.class.Name, pr.err))
		}
		if pr.res != nil && pr.res.Local.RR != nil {
			p.Phases = pr.res.Local.RR.Points
			out.ServerCPU = higherCPU(out.ServerCPU, pr.res.Remote.CPU)
		}
		for _, s := range pr.samples {
			if s.Point >= 0 && s.Point < len(hists) {
				_ = hists[s.Point].RecordValue(min(max(int64(s.RTT), 1), int64(100*time.Second)))
			}
		}
		p.Series = probeSeries(pr.samples, at, cfg.Step)
		out.Probes = append(out.Probes, p)
		if ph := incompletePhase(cfg, p.Phases, !loadStart.IsZero()); ph != "" && pr.err == nil {
			errs = append(errs, fmt.Sprintf("the %s probe: %s", pr.class.Name, ph))
		}
	}
	out.HostDelays = HostDelays(out, cfg.PathBound)
	l := &out.Latency
	l.Idle, l.Loaded, l.After = stats.Summarize(hists[0], 1), stats.Summarize(hists[1], 1), stats.Summarize(hists[2], 1)
	l.IdleHistogram, l.LoadedHistogram = rr.HistogramOf(hists[0], 1, 0), rr.HistogramOf(hists[1], 1, 0)
	if l.Idle.Count > 0 && l.Loaded.Count > 0 {
		a, b := l.Idle, l.Loaded
		l.Increase = result.Percentiles{Count: b.Count, Min: b.Min - a.Min, Mean: b.Mean - a.Mean, P50: b.P50 - a.P50,
			P90: b.P90 - a.P90, P99: b.P99 - a.P99, P999: b.P999 - a.P999, Max: b.Max - a.Max}
	}
	if len(errs) > 0 {
		out.Error = errs[0]
		out.Warnings = append(out.Warnings, errs[1:]...)
	}
	return out
}

// HostDelays names the phases in which a host, not the network, added
// delay to a probe (rrload.HostDelays), its class first in the reason;
// pathBound is the most RTT the path can give, 0 when not known.
func HostDelays(r *result.RRUL, pathBound time.Duration) []result.RRHostDelay {
	var out []result.RRHostDelay
	for _, p := range r.Probes {
		for _, d := range rrload.HostDelays(p.Phases, pathBound) {
			d.Reason = fmt.Sprintf("UDP %s probe: %s", p.Class, d.Reason)
			out = append(out, d)
		}
	}
	return out
}

// flowFigures is the flows' test as each class's two flows, each from
// its own stream's counters: the receiver's bytes over the receiver's
// time, and per interval on the common axis.
func flowFigures(fr *flowRun, at func(time.Time) float64, step time.Duration) []result.RRULFlow {
	var out []result.RRULFlow
	var pairs []result.Flow
	var rows []result.IntervalRow
	if fr.res != nil {
		pairs, rows = fr.res.Flows(), fr.res.IntervalRows()
	}
	for i, cl := range FlowClasses {
		upID, downID := streamIDs(i)
		for _, dir := range []string{"up", "down"} {
			f := result.RRULFlow{Class: cl.Name, TOS: cl.TOS, Direction: dir}
			id := upID
			if dir == "down" {
				id = downID
			}
			if fr.err != nil {
				f.Error = fr.err.Error()
			}
			for _, p := range pairs {
				if p.ID != id {
					continue
				}
				if p.Received != nil {
					r := result.SumStreams([]*result.Stream{p.Received})
					f.Bytes, f.Seconds, f.BitsPerSecond = r.Bytes, r.Seconds, r.BitsPerSecond()
				}
				senderInfo(&f, p)
			}
			f.Series = streamSeries(rows, id, at(fr.start), step)
			out = append(out, f)
		}
	}
	return out
}

// streamSeries is stream id's receiver's rate (Mbit/s) in each interval,
// at the interval's end on the axis (origin is the test's start on it).
func streamSeries(rows []result.IntervalRow, id int, origin float64, step time.Duration) []result.SeriesPoint {
	var out []result.SeriesPoint
	for _, row := range rows {
		if row.Omitted {
			continue
		}
		for _, fi := range row.Flows {
			span := fi.ReceivedSpan
			// A tail of a few ms holds what a buffer released at
			// once: its rate is no step's.
			if fi.ID != id || fi.Received == nil || span.Seconds() <= 0 || span.ShortTail(step) {
				continue
			}
			out = append(out, result.SeriesPoint{T: round3(origin + span.End),
				V: float64(fi.Received.Bytes) * 8 / span.Seconds() / 1e6})
		}
	}
	return out
}

// senderInfo keeps the sending stream's congestion control and its last
// TCP_INFO: its RTT, its window and what held it back, the receiver's
// window or its own buffer.
func senderInfo(f *result.RRULFlow, fl result.Flow) {
	if fl.Sent == nil {
		return
	}
	f.Retransmits = fl.Sent.Retransmits
	f.Congestion = fl.Sent.Socket.Congestion
	if fl.Sent.TCPInfo == nil {
		return
	}
	in := fl.Sent.TCPInfo
	f.SenderRTTms, f.SenderCwndBytes = float64(in.RTTus)/1e3, in.CwndBytes()
	if lt, ok := figures.Limited(in.BusyTimeus, in.RwndLimitedus, in.SndbufLimitedus); ok {
		f.RwndLimited, f.SndbufLimited = &lt.Rwnd, &lt.Sndbuf
	}
}

// probeSeries is a probe's mean RTT (ms) in each step that had one, at
// the step's middle; samples before the axis's zero (the probes that
// were ready before the last one) are left out of the series.
func probeSeries(samples []rr.Sample, at func(time.Time) float64, step time.Duration) []result.SeriesPoint {
	var out []result.SeriesPoint
	w := step.Seconds()
	bin, sum, n := -1, 0.0, 0
	flush := func() {
		if n > 0 {
			out = append(out, result.SeriesPoint{T: round3((float64(bin) + 0.5) * w), V: sum / float64(n) / 1e6})
		}
	}
	for _, s := range samples {
		t := at(s.Done)
		if t < 0 {
			continue
		}
		b := int(math.Floor(t / w))
		if b != bin {
			flush()
			bin, sum, n = b, 0, 0
		}
		sum += float64(s.RTT)
		n++
	}
	flush()
	return out
}

// incompletePhase says which phase of a probe ran under nine tenths of
// its plan (rrload's rule), or "".
func incompletePhase(cfg Config, points []result.RRPoint, loaded bool) string {
	planned := map[string]time.Duration{rrload.PhaseIdle: cfg.Idle, rrload.PhaseLoaded: cfg.Load, rrload.PhaseAfter: cfg.After}
	for _, label := range phaseLabels {
		if label != rrload.PhaseIdle && !loaded {
			continue
		}
		var ran float64
		for _, p := range points {
			if p.Label == label {
				ran = p.Seconds
			}
		}
		if plan := planned[label].Seconds(); plan > 0 && ran < 0.9*plan {
			return fmt.Sprintf("the %s phase ran %.2f s of %.2f s", label, ran, plan)
		}
	}
	return ""
}

func higherCPU(have *result.CPU, c result.CPU) *result.CPU {
	if c.TotalPercent <= 0 || have != nil && have.TotalPercent >= c.TotalPercent {
		return have
	}
	return &c
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
