package plot

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// The compare figures overlay the same figure of two or more runs or
// campaigns, each series named "LABEL: series", on axes fixed to cover
// every input, so that no input's range decides the view alone.

func compareCheck(labels []string, n int) error {
	if n < 2 {
		return errors.New("compare: give two or more inputs")
	}
	if len(labels) != n {
		return fmt.Errorf("compare: %d labels for %d inputs", len(labels), n)
	}
	return nil
}

// compareFooter names every input's subject.
func compareFooter(labels []string, footers []Footer) Footer {
	f := footers[0]
	subjects := make([]string, len(footers))
	hosts := map[string]bool{}
	f.Hosts = nil
	for i, ft := range footers {
		subjects[i] = labels[i]
		if ft.Subject != "" && ft.Subject != labels[i] {
			subjects[i] += " (" + ft.Subject + ")"
		}
		for _, h := range ft.Hosts {
			if !hosts[h] {
				hosts[h] = true
				f.Hosts = append(f.Hosts, h)
			}
		}
	}
	f.Subject = "compare " + strings.Join(subjects, " vs ")
	return f
}

// shared fixes a's range to cover values, leaving out of a log axis
// those ≤ 0; an axis already fixed by the caller stays.
func shared(a Axis, values []float64) Axis {
	if a.fixed() {
		return a
	}
	log := a.wantsLog(values)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi > lo {
		if !log && lo > 0 && (a.Quantity == BitRate || a.Quantity == Bytes || a.Quantity == Percent) {
			lo = 0
		}
		switch {
		case log && a.AtData:
			lo, hi = lo/1.15, hi*1.15
		case log:
			lo, hi = niceDown(lo), niceUp(hi)
		default:
			hi += 0.08 * (hi - lo)
		}
		a.Min, a.Max = lo, hi
		if log {
			a.Scale = Log
		} else if a.Scale == Auto {
			a.Scale = Linear
		}
	}
	return a
}

// CompareSweeps overlays sweeps of several campaigns.
func CompareSweeps(labels []string, ins []SweepInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := SweepInput{Title: ins[0].Title, X: ins[0].X, Y: ins[0].Y}
	out.Series, out.Footer = overlay(labels, ins, func(in SweepInput) Footer { return in.Footer },
		func(in SweepInput) []SweepSeries { return in.Series }, func(s *SweepSeries) *string { return &s.Name })
	var xs, ys []float64
	for _, s := range out.Series {
		for _, p := range s.Points {
			xs = append(xs, p.X)
			ys = append(ys, p.values()...)
		}
	}
	out.X.AtData = true // as Sweep draws it
	out.X, out.Y = shared(out.X, xs), shared(out.Y, ys)
	return Sweep(out)
}

// overlay gathers every input's series, each renamed "LABEL: name",
// and the inputs' footers as one.
func overlay[In, S any](labels []string, ins []In, footer func(In) Footer, series func(In) []S, name func(*S) *string) ([]S, Footer) {
	var out []S
	footers := make([]Footer, len(ins))
	for i, in := range ins {
		footers[i] = footer(in)
		for _, s := range series(in) {
			*name(&s) = labels[i] + ": " + *name(&s)
			out = append(out, s)
		}
	}
	return out, compareFooter(labels, footers)
}

// CompareUDPMon overlays UDPmon sweeps.
func CompareUDPMon(labels []string, ins []UDPMonInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := UDPMonInput{Title: ins[0].Title, Rate: ins[0].Rate}
	out.Series, out.Footer = overlay(labels, ins, func(in UDPMonInput) Footer { return in.Footer },
		func(in UDPMonInput) []UDPMonSeries { return in.Series }, func(s *UDPMonSeries) *string { return &s.Name })
	return UDPMon(out)
}

// CompareTimelines overlays runs' timelines, panel by panel, on one time
// axis.
func CompareTimelines(labels []string, ins []TimelineInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := TimelineInput{Title: ins[0].Title}
	footer := func(in TimelineInput) Footer { return in.Footer }
	name := func(s *TimeSeries) *string { return &s.Name }
	panel := func(pick func(TimelineInput) []TimeSeries) []TimeSeries {
		series, _ := overlay(labels, ins, footer, pick, name)
		return series
	}
	out.Goodput = panel(func(in TimelineInput) []TimeSeries { return in.Goodput })
	out.Cwnd = panel(func(in TimelineInput) []TimeSeries { return in.Cwnd })
	out.RTT = panel(func(in TimelineInput) []TimeSeries { return in.RTT })
	out.Retransmits = panel(func(in TimelineInput) []TimeSeries { return in.Retransmits })
	out.Loss = panel(func(in TimelineInput) []TimeSeries { return in.Loss })
	out.Jitter, out.Footer = overlay(labels, ins, footer, func(in TimelineInput) []TimeSeries { return in.Jitter }, name)
	return Timeline(out)
}

// CompareLatency overlays RTT distributions.
func CompareLatency(labels []string, ins []LatencyInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := LatencyInput{Title: ins[0].Title}
	out.Series, out.Footer = overlay(labels, ins, func(in LatencyInput) Footer { return in.Footer },
		func(in LatencyInput) []LatencySeries { return in.Series }, func(s *LatencySeries) *string { return &s.Name })
	return Latency(out)
}
