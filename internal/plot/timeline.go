package plot

import "errors"

// TimeSeries is one line over the seconds of a test: X in seconds since
// the test start, Y in the panel's unit.
type TimeSeries struct {
	Name   string
	Points []Point
}

// TimelineInput is one run over time: goodput per interval and, on
// linked panels below, the sender's TCP_INFO timeline (TCP) or the
// receiver's loss and jitter per interval (UDP). Empty panels are left
// out.
type TimelineInput struct {
	Title   string
	Goodput []TimeSeries // bits/s, one per direction (or stream)
	// TCP, from the sender's TCP_INFO timeline.
	Cwnd        []TimeSeries // bytes
	RTT         []TimeSeries // ms, smoothed RTT
	Retransmits []TimeSeries // segments retransmitted since the previous sample
	// UDP, per interval, from the receiver.
	Loss   []TimeSeries // percent of datagrams
	Jitter []TimeSeries // ms
	Footer Footer
}

// Timeline draws the panels on one time axis.
func Timeline(in TimelineInput) (*Figure, error) {
	f := &Figure{Kind: "timeline", Title: in.Title, Footer: in.Footer}
	panels := []struct {
		y      Axis
		series []TimeSeries
		marks  bool
	}{
		{Axis{Label: "Goodput", Quantity: BitRate}, in.Goodput, true},
		{Axis{Label: "cwnd", Quantity: Bytes}, in.Cwnd, false},
		{Axis{Label: "RTT", Quantity: Millis}, in.RTT, false},
		{Axis{Label: "Retransmits", Quantity: Number, Scale: Linear}, in.Retransmits, true},
		{Axis{Label: "Loss", Quantity: Percent, Scale: Linear}, in.Loss, true},
		{Axis{Label: "Jitter", Quantity: Millis}, in.Jitter, true},
	}
	x := Axis{Label: "Time", Quantity: Seconds, Scale: Linear}
	for _, pn := range panels {
		if !hasPoints(pn.series) {
			continue
		}
		var lists [][]Point
		for _, s := range pn.series {
			lists = append(lists, s.Points)
		}
		allX, allY := allPoints(lists...)
		b := f.newPanel(x, pn.y, allX, allY)
		for i, s := range pn.series {
			b.line(s.Name, s.Points, lineStyle(i), pn.marks)
		}
		b.finish()
	}
	if len(f.Panels) == 0 {
		return nil, errors.New("timeline: the run has no intervals or TCP_INFO samples to draw")
	}
	linkX(f.Panels)
	return f, nil
}

func hasPoints(series []TimeSeries) bool {
	for _, s := range series {
		if len(s.Points) > 0 {
			return true
		}
	}
	return false
}
