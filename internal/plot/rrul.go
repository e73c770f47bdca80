package plot

import (
	"errors"
	"fmt"
	"sort"

	"github.com/wireperf/wireperf/internal/result"
)

// RRULInput is an RRUL run (wireperf rrul) in flent's "all" layout: each
// class's goodput down and up over time, the probes' RTT over time with
// the phases shaded, and the RTT's CDF idle and loaded.
type RRULInput struct {
	Title            string
	Download, Upload []TimeSeries // bits/s over s
	RTT              []TimeSeries // ms over s
	Phases           []LoadPhase
	// IdleCDF and LoadedCDF are the share of probes (percent) at or
	// under each RTT (ms).
	IdleCDF, LoadedCDF []Point
	Footer             Footer
}

// RRUL draws the four panels: download, upload and RTT on one time axis,
// and the RTT's CDF.
func RRUL(in RRULInput) (*Figure, error) {
	if !hasPoints(in.Download) && !hasPoints(in.Upload) && !hasPoints(in.RTT) {
		return nil, errors.New("rrul: no goodput or RTT series to draw")
	}
	f := &Figure{Kind: "rrul", Title: in.Title, Footer: in.Footer}
	x := Axis{Label: "Time", Quantity: Seconds, Scale: Linear}
	var phaseX []float64
	for _, ph := range in.Phases {
		phaseX = append(phaseX, ph.Start, ph.End)
	}
	timed := []struct {
		y      Axis
		series []TimeSeries
	}{
		{Axis{Label: "Download", Quantity: BitRate, Scale: Linear}, in.Download},
		{Axis{Label: "Upload", Quantity: BitRate, Scale: Linear}, in.Upload},
		{Axis{Label: "RTT", Quantity: Millis, Scale: Linear}, in.RTT},
	}
	for _, pn := range timed {
		var lists [][]Point
		for _, s := range pn.series {
			lists = append(lists, s.Points)
		}
		allX, allY := allPoints(lists...)
		allX = append(allX, phaseX...)
		b := f.newPanel(x, pn.y, allX, allY)
		b.panel.Plot.Add(phaseBands(in.Phases))
		b.extend(phaseX, []float64{0})
		for i, s := range pn.series {
			b.line(s.Name, s.Points, lineStyle(i), false)
		}
		b.finish()
	}
	linkX(f.Panels)
	if len(in.IdleCDF) > 0 || len(in.LoadedCDF) > 0 {
		allX, allY := allPoints(in.IdleCDF, in.LoadedCDF)
		b := f.newPanel(Axis{Label: "RTT", Quantity: Millis, Scale: Linear}, Axis{Label: "Probes at or under", Quantity: Percent, Scale: Linear, Min: 0, Max: 100}, allX, allY)
		b.line("idle", in.IdleCDF, lineStyle(0), false)
		b.line("loaded", in.LoadedCDF, lineStyle(3), false)
		b.finish()
	}
	f.note("Shaded: the phases. Goodput is each flow's receiver's, per step; RTT is each UDP probe's mean per step.")
	return f, nil
}

// RRULOf maps an RRUL run onto the figure's input.
func RRULOf(r *result.RRUL, subject string) (RRULInput, error) {
	if r == nil {
		return RRULInput{}, errors.New("no RRUL result")
	}
	in := RRULInput{
		Title:  fmt.Sprintf("RRUL to %s: %d TCP flows, one each way per DSCP class", r.Host, len(r.Flows)),
		Footer: Footer{Subject: subject, Hosts: []string{r.Host}, Date: r.StartedAt},
	}
	for _, fl := range r.Flows {
		s := TimeSeries{Name: fl.Class}
		for _, p := range fl.Series {
			s.Points = append(s.Points, Point{p.T, p.V * 1e6})
		}
		if fl.Direction == "down" {
			in.Download = append(in.Download, s)
		} else {
			in.Upload = append(in.Upload, s)
		}
	}
	for _, pr := range r.Probes {
		s := TimeSeries{Name: "UDP " + pr.Class}
		for _, p := range pr.Series {
			s.Points = append(s.Points, Point{p.T, p.V})
		}
		in.RTT = append(in.RTT, s)
	}
	if r.LoadEndSeconds > 0 {
		in.Phases = []LoadPhase{
			{Label: "idle", Start: 0, End: r.LoadStartSeconds},
			{Label: "loaded", Start: r.LoadStartSeconds, End: r.LoadEndSeconds},
			{Label: "after", Start: r.LoadEndSeconds, End: r.LoadEndSeconds + r.AfterSeconds},
		}
	}
	in.IdleCDF = cdfOf(r.Latency.IdleHistogram)
	in.LoadedCDF = cdfOf(r.Latency.LoadedHistogram)
	return in, nil
}

// cdfOf is a histogram's cumulative share (percent) at each bucket's top,
// in ms.
func cdfOf(h *result.Histogram) []Point {
	if h == nil || h.Count <= 0 {
		return nil
	}
	buckets := append([]result.HistogramBucket(nil), h.Buckets...)
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].To < buckets[j].To })
	var out []Point
	var n int64
	for _, b := range buckets {
		n += b.Count
		out = append(out, Point{b.To / 1e3, 100 * float64(n) / float64(h.Count)})
	}
	return out
}
