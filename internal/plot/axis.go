package plot

import (
	"math"
	"sort"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"

	"github.com/wireperf/wireperf/internal/units"
)

// Quantity is what an axis measures; it picks the unit and the tick
// labels, in iperf's conventions: rates in bits/sec by powers of ten,
// sizes in bytes by powers of two.
type Quantity int

// Quantities. Values are in the base unit named: bits/s, bytes, s, µs.
const (
	Number  Quantity = iota // a count or other plain number
	BitRate                 // bits per second
	Bytes                   // bytes
	Seconds                 // seconds
	Micros                  // microseconds
	Millis                  // milliseconds
	Percent                 // percent
)

// Scale is how an axis maps its values.
type Scale int

// Scales. Auto is log where the data span two decades or more.
const (
	Auto Scale = iota
	Linear
	Log
)

// Axis describes one axis of a figure.
type Axis struct {
	Label    string // what it shows, e.g. "Goodput"; the unit is added
	Quantity Quantity
	Scale    Scale
	// Min and Max fix the range (a comparison's shared axes); when
	// Max <= Min the range fits the data.
	Min, Max float64
	// AtData puts the ticks at the data's own values (a sweep's points,
	// such as 64K, 1M, 16M) instead of round numbers.
	AtData bool
}

func (a Axis) fixed() bool { return a.Max > a.Min }

// logDecades is the span, in decades, from which an Auto axis is log.
const logDecades = 2

// wantsLog decides the scale of a over values: Log and Linear as asked,
// Auto by the span of the positive values.
func (a Axis) wantsLog(values []float64) bool {
	switch a.Scale {
	case Log:
		return true
	case Linear:
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if a.fixed() && a.Min > 0 {
		lo, hi = math.Min(lo, a.Min), math.Max(hi, a.Max)
	}
	if hi <= lo {
		return false
	}
	// A sweep of sizes, durations or rates steps geometrically (64K, 256K,
	// 1M): from a factor of four it reads best on a log axis.
	if a.AtData && a.Quantity != Number && a.Quantity != Percent && hi/lo >= 4 {
		return true
	}
	return math.Log10(hi/lo) >= logDecades
}

// linearUnit is the unit a linear axis of quantity q shows values up to
// max in: its name and the divisor from the base unit.
func linearUnit(q Quantity, max float64) (string, float64) {
	switch q {
	case BitRate:
		name := unitName(units.FormatRate(max, units.AdaptiveBits))
		return name, math.Pow(1000, float64(unitPower(name)))
	case Bytes:
		name := unitName(units.FormatTransfer(max, units.AdaptiveBits))
		return name, math.Pow(1024, float64(unitPower(name)))
	case Seconds:
		return "s", 1
	case Micros:
		if max >= 10000 {
			return "ms", 1000
		}
		return "µs", 1
	case Millis:
		return "ms", 1
	case Percent:
		return "%", 1
	}
	return "", 1
}

// unitName is the unit of a units-formatted figure: "940 Mbits/sec" →
// "Mbits/sec".
func unitName(formatted string) string {
	f := strings.Fields(formatted)
	return f[len(f)-1]
}

// unitPower reads the prefix of an iperf unit name: 0 for Bytes and
// bits/sec, 1 for K, 2 for M, 3 for G, 4 for T.
func unitPower(name string) int {
	return strings.IndexByte("KMGT", name[0]) + 1 // -1 + 1 for no prefix
}

// compact trims a units figure for a tick: "64.0 KBytes" → "64 KBytes",
// "1.00 Mbits/sec" → "1 Mbits/sec", "1.50 MBytes" stays.
func compact(formatted string) string {
	f := strings.Fields(formatted)
	num := f[0]
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	if len(f) == 1 {
		return num
	}
	return num + " " + f[1]
}

// tickLabel is the label of a tick at base-unit value v on an axis whose
// labels carry their own unit (log axes and AtData axes).
func tickLabel(q Quantity, v float64) string {
	switch q {
	case BitRate:
		return compact(units.FormatRate(v, units.AdaptiveBits))
	case Bytes:
		return compact(units.FormatTransfer(v, units.AdaptiveBits))
	case Micros:
		switch a := math.Abs(v); {
		case a >= 1e6:
			return strconv.FormatFloat(v/1e6, 'g', 4, 64) + " s"
		case a >= 1e3:
			return strconv.FormatFloat(v/1e3, 'g', 4, 64) + " ms"
		}
		return strconv.FormatFloat(v, 'g', 4, 64) + " µs"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// axisLabel is the label with its unit: "Goodput (Mbits/sec)".
func axisLabel(label, unit string) string {
	if unit == "" {
		return label
	}
	return label + " (" + unit + ")"
}

// configure sets up a gonum axis for a over the values it will show
// (only those kept: positive ones on a log axis). log is the scale
// chosen by wantsLog.
func (a Axis) configure(pa *gplot.Axis, values []float64, log bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if a.fixed() {
		lo, hi = a.Min, a.Max
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
		if log {
			lo, hi = 1, 10
		}
	}
	if log {
		pa.Scale = gplot.LogScale{}
		pa.Tick.Marker = logTicker{q: a.Quantity}
		pa.Label.Text = axisLabel(a.Label, sharedLogUnit(a.Quantity))
		switch {
		case a.fixed():
		case a.AtData:
			lo, hi = lo/1.15, hi*1.15 // the end points clear of the frame
		case a.Quantity == Bytes:
			lo, hi = pow2Down(lo), pow2Up(hi)
		default:
			lo, hi = niceDown(lo), niceUp(hi)
		}
		if a.AtData {
			pa.Tick.Marker = dataTicker(a.Quantity, values, 1)
		}
		pa.Min, pa.Max = lo, hi
		return
	}
	unit, div := linearUnit(a.Quantity, math.Max(math.Abs(lo), math.Abs(hi)))
	pa.Label.Text = axisLabel(a.Label, unit)
	pa.Tick.Marker = scaledTicker{div: div}
	if a.AtData {
		pa.Tick.Marker = dataTicker(a.Quantity, values, div)
		if div != 1 {
			pa.Label.Text = a.Label
		}
	}
	if !a.fixed() && lo > 0 && a.Quantity != Number && !a.AtData {
		lo = 0 // rates, sizes, delays and times read against zero
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
		if lo < 0 && lo+1 >= 0 {
			lo = 0 // counts and rates that are all 0 read from 0 up
		}
	}
	pa.Min, pa.Max = lo, hi
}

// sharedLogUnit is the unit named in a log axis's label; rates and sizes
// carry their unit on every tick instead.
func sharedLogUnit(q Quantity) string {
	if q == BitRate || q == Bytes || q == Micros {
		return ""
	}
	u, _ := linearUnit(q, 1)
	return u
}

// scaledTicker is gonum's default ticks over values divided by div.
type scaledTicker struct{ div float64 }

func (t scaledTicker) Ticks(min, max float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(min/t.div, max/t.div)
	for i := range ticks {
		ticks[i].Value *= t.div
	}
	return ticks
}

// dataTicker puts a labelled tick at each distinct value.
func dataTicker(q Quantity, values []float64, div float64) gplot.ConstantTicks {
	distinct := map[float64]bool{}
	var vs []float64
	for _, v := range values {
		if !distinct[v] {
			distinct[v] = true
			vs = append(vs, v)
		}
	}
	sort.Float64s(vs)
	ticks := make(gplot.ConstantTicks, 0, len(vs))
	for _, v := range vs {
		label := tickLabel(q, v)
		if div != 1 && q != BitRate && q != Bytes {
			label = strconv.FormatFloat(v/div, 'g', 4, 64)
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: label})
	}
	return ticks
}

// logTicker is a log axis's ticks: a labelled one at each power of ten,
// minor ones at 2..9 times it; with less than one decade in view, the
// range's ends are labelled too so that the axis is never blank.
type logTicker struct{ q Quantity }

func (t logTicker) Ticks(min, max float64) []gplot.Tick {
	if min <= 0 || max <= 0 || min > max {
		return nil
	}
	if t.q == Bytes {
		return binaryTicks(min, max)
	}
	var ticks []gplot.Tick
	labelled := 0
	// Over less than three decades the 2s and 5s are labelled too.
	few := math.Log10(max/min) < 3
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for i := 1; i < 10; i++ {
			v := base * float64(i)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			tk := gplot.Tick{Value: v}
			if i == 1 || (few && (i == 2 || i == 5)) {
				tk.Label = tickLabel(t.q, v)
				labelled++
			}
			ticks = append(ticks, tk)
		}
	}
	if labelled < 2 {
		ticks = append(ticks, gplot.Tick{Value: min, Label: tickLabel(t.q, min)}, gplot.Tick{Value: max, Label: tickLabel(t.q, max)})
	}
	return ticks
}

// binaryTicks is a log byte axis's ticks: one at each power of two, the
// labelled ones a power of 2, 4, 16 or 1024 apart so that about six read
// ("16 KBytes", "64 KBytes", "1 MBytes"), as iperf counts bytes; with
// fewer than two in view, the range's ends are labelled too.
func binaryTicks(min, max float64) []gplot.Tick {
	lo, hi := int(math.Ceil(math.Log2(min)-1e-9)), int(math.Floor(math.Log2(max)+1e-9))
	step := 10
	for _, s := range []int{1, 2, 4} {
		if (hi-lo)/s <= 6 {
			step = s
			break
		}
	}
	var ticks []gplot.Tick
	labelled := 0
	for e := lo; e <= hi; e++ {
		v := math.Ldexp(1, e)
		tk := gplot.Tick{Value: v}
		if e%step == 0 {
			tk.Label = tickLabel(Bytes, v)
			labelled++
		}
		ticks = append(ticks, tk)
	}
	if labelled < 2 {
		ticks = append(ticks, gplot.Tick{Value: min, Label: tickLabel(Bytes, min)}, gplot.Tick{Value: max, Label: tickLabel(Bytes, max)})
	}
	return ticks
}

// positive keeps the points whose coordinates a log axis can show: on
// each log axis, only values > 0. It returns the kept points and how
// many it left out.
func positive(pts []Point, xlog, ylog bool) ([]Point, int) {
	if !xlog && !ylog {
		return pts, 0
	}
	kept := make([]Point, 0, len(pts))
	for _, p := range pts {
		if (xlog && !(p.X > 0)) || (ylog && !(p.Y > 0)) {
			continue
		}
		kept = append(kept, p)
	}
	return kept, len(pts) - len(kept)
}

// finitePoints drops points with NaN or infinite coordinates: gonum's
// plotters refuse them.
func finitePoints(pts []Point) []Point {
	out := pts[:0:0]
	for _, p := range pts {
		if !math.IsNaN(p.X) && !math.IsNaN(p.Y) && !math.IsInf(p.X, 0) && !math.IsInf(p.Y, 0) {
			out = append(out, p)
		}
	}
	return out
}

// niceDown is the largest 1, 2 or 5 × 10^k at or below v > 0; niceUp
// the smallest at or above it. A log axis ends on them.
func niceDown(v float64) float64 {
	base := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*base <= v*(1+1e-9) {
			return m * base
		}
	}
	return base
}

// pow2Down is the largest power of two at or below v > 0; pow2Up the
// smallest at or above it. A log byte axis ends on them.
func pow2Down(v float64) float64 { return math.Ldexp(1, int(math.Floor(math.Log2(v)+1e-9))) }

func pow2Up(v float64) float64 { return math.Ldexp(1, int(math.Ceil(math.Log2(v)-1e-9))) }

func niceUp(v float64) float64 {
	base := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*base >= v*(1-1e-9) {
			return m * base
		}
	}
	return 10 * base
}
