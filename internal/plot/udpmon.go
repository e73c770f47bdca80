package plot

import (
	"errors"
	"math"
)

// UDPMonInput is a UDPmon sweep: per datagram size, the goodput and the
// loss and re-ordering against the inter-packet spacing.
type UDPMonInput struct {
	Title string
	// Rate names what the goodput points are, e.g. "Received wire rate"
	// or "Goodput"; it labels the axis.
	Rate   string
	Series []UDPMonSeries
	Footer Footer
}

// UDPMonSeries is one datagram size.
type UDPMonSeries struct {
	Name string // e.g. "1472 B"
	// DatagramBits is what one datagram counts for in the plotted rate
	// (payload × 8 for user data; with the headers, preamble and gap for
	// the wire rate): the reference curve is DatagramBits ÷ spacing.
	DatagramBits float64
	Points       []UDPMonPoint
}

// UDPMonPoint is one spacing.
type UDPMonPoint struct {
	SpacingUs        float64
	BitsPerSecond    float64
	LossPercent      float64
	ReorderedPercent float64
}

// curveSamples is how many points draw a 1/t reference curve.
const curveSamples = 64

// UDPMon draws the rate against spacing with the 1/t curve each size
// would follow if the sender's spacing alone set the rate, and below it
// loss and re-ordering against spacing.
func UDPMon(in UDPMonInput) (*Figure, error) {
	if len(in.Series) == 0 {
		return nil, errors.New("udpmon: no sizes to draw")
	}
	rateLabel := in.Rate
	if rateLabel == "" {
		rateLabel = "Goodput"
	}
	f := &Figure{Kind: "udpmon", Title: in.Title, Footer: in.Footer}
	var rate, loss []Point
	for _, s := range in.Series {
		for _, p := range s.Points {
			rate = append(rate, Point{p.SpacingUs, p.BitsPerSecond})
			loss = append(loss, Point{p.SpacingUs, p.LossPercent}, Point{p.SpacingUs, p.ReorderedPercent})
		}
	}
	x := Axis{Label: "Spacing", Quantity: Micros}
	allX, allY := allPoints(rate)
	top := f.newPanel(x, Axis{Label: rateLabel, Quantity: BitRate}, allX, allY)
	_, lossY := allPoints(loss)
	bottom := f.newPanel(x, Axis{Label: "Loss, re-ordered", Quantity: Percent, Scale: Linear}, allX, lossY)
	var lo, hi float64 = math.Inf(1), math.Inf(-1)
	for _, t := range allX {
		if t > 0 {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
	}
	for i, s := range in.Series {
		st := lineStyle(i)
		var r, l, o []Point
		for _, p := range s.Points {
			r = append(r, Point{p.SpacingUs, p.BitsPerSecond})
			l = append(l, Point{p.SpacingUs, p.LossPercent})
			o = append(o, Point{p.SpacingUs, p.ReorderedPercent})
		}
		top.line(s.Name, r, st, true)
		if s.DatagramBits > 0 && hi > 0 {
			curve := oneOverT(s.DatagramBits, lo, hi, top.panel.XLog)
			top.line(s.Name+": size ÷ spacing", curve, dashed(st), false)
		}
		bottom.line(s.Name+" loss", l, st, true)
		bottom.line(s.Name+" re-ordered", o, dashed(st), true)
	}
	top.finish()
	bottom.finish()
	// The 1/t curve climbs without bound at small spacings; the axis stops
	// a little above the measured rates so they stay readable.
	if maxRate := maxY(top.panel.Series, func(name string) bool { return !isCurve(name) }); maxRate > 0 {
		top.panel.Plot.Y.Max = maxRate * 1.15
	}
	linkX(f.Panels)
	f.note("Dashed in the top panel: the rate each size would reach if its spacing alone set it (size ÷ spacing); dashed below: re-ordered datagrams.")
	return f, nil
}

// oneOverT samples bits ÷ t (t in µs, rate in bits/s) from lo to hi.
func oneOverT(bits, lo, hi float64, logX bool) []Point {
	pts := make([]Point, 0, curveSamples)
	for i := 0; i < curveSamples; i++ {
		frac := float64(i) / (curveSamples - 1)
		t := lo + frac*(hi-lo)
		if logX {
			t = lo * math.Pow(hi/lo, frac)
		}
		pts = append(pts, Point{t, bits / (t / 1e6)})
	}
	return pts
}

func isCurve(name string) bool {
	const suffix = ": size ÷ spacing"
	return len(name) >= len(suffix) && name[len(name)-len(suffix):] == suffix
}

func maxY(series []Series, use func(string) bool) float64 {
	m := 0.0
	for _, s := range series {
		if !use(s.Name) {
			continue
		}
		for _, p := range s.Points {
			m = math.Max(m, p.Y)
		}
	}
	return m
}
