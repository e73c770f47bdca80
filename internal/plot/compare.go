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
	footers := make([]Footer, len(ins))
	var xs, ys []float64
	for i, in := range ins {
		footers[i] = in.Footer
		for _, s := range in.Series {
			s.Name = labels[i] + ": " + s.Name
			out.Series = append(out.Series, s)
			for _, p := range s.Points {
				xs = append(xs, p.X)
				ys = append(ys, p.Values...)
			}
		}
	}
	out.X.AtData = true // as Sweep draws it
	out.X, out.Y = shared(out.X, xs), shared(out.Y, ys)
	out.Footer = compareFooter(labels, footers)
	return Sweep(out)
}

// CompareUDPMon overlays UDPmon sweeps.
func CompareUDPMon(labels []string, ins []UDPMonInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := UDPMonInput{Title: ins[0].Title, Rate: ins[0].Rate}
	footers := make([]Footer, len(ins))
	for i, in := range ins {
		footers[i] = in.Footer
		for _, s := range in.Series {
			s.Name = labels[i] + ": " + s.Name
			out.Series = append(out.Series, s)
		}
	}
	out.Footer = compareFooter(labels, footers)
	return UDPMon(out)
}

// CompareTimelines overlays runs' timelines, panel by panel, on one time
// axis.
func CompareTimelines(labels []string, ins []TimelineInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := TimelineInput{Title: ins[0].Title}
	footers := make([]Footer, len(ins))
	prefix := func(label string, ss []TimeSeries) []TimeSeries {
		out := make([]TimeSeries, len(ss))
		for i, s := range ss {
			out[i] = TimeSeries{Name: label + ": " + s.Name, Points: s.Points}
		}
		return out
	}
	for i, in := range ins {
		footers[i] = in.Footer
		out.Goodput = append(out.Goodput, prefix(labels[i], in.Goodput)...)
		out.Cwnd = append(out.Cwnd, prefix(labels[i], in.Cwnd)...)
		out.RTT = append(out.RTT, prefix(labels[i], in.RTT)...)
		out.Retransmits = append(out.Retransmits, prefix(labels[i], in.Retransmits)...)
		out.Loss = append(out.Loss, prefix(labels[i], in.Loss)...)
		out.Jitter = append(out.Jitter, prefix(labels[i], in.Jitter)...)
	}
	out.Footer = compareFooter(labels, footers)
	return Timeline(out)
}

// CompareLatency overlays RTT distributions.
func CompareLatency(labels []string, ins []LatencyInput) (*Figure, error) {
	if err := compareCheck(labels, len(ins)); err != nil {
		return nil, err
	}
	out := LatencyInput{Title: ins[0].Title}
	footers := make([]Footer, len(ins))
	for i, in := range ins {
		footers[i] = in.Footer
		for _, s := range in.Series {
			s.Name = labels[i] + ": " + s.Name
			out.Series = append(out.Series, s)
		}
	}
	out.Footer = compareFooter(labels, footers)
	return Latency(out)
}
