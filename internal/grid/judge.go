package grid

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// Colour is a cell's verdict, as research networks' dashboards show it.
type Colour string

const (
	Green Colour = "green" // within every threshold
	Amber Colour = "amber" // past an amber threshold, or the last run did not happen
	Red   Colour = "red"   // past a red threshold, or the last run failed
	Grey  Colour = "grey"  // no result recent enough to judge
	// Unmeasured is a pair with no result at all: nothing schedules it,
	// or its first run is still to come. It is drawn empty, not grey.
	Unmeasured Colour = "unmeasured"
)

// Colours are the cell colours, in the order the page counts them.
var Colours = []Colour{Green, Amber, Red, Grey, Unmeasured}

// Severity ranks a colour for "worst pair": red worst, then amber, grey,
// unmeasured, green.
func Severity(c Colour) int {
	switch c {
	case Red:
		return 4
	case Amber:
		return 3
	case Grey:
		return 2
	case Unmeasured:
		return 1
	}
	return 0
}

// notScheduled is the verdict of a pair that no task measures.
var notScheduled = Verdict{Unmeasured, []string{"not scheduled"}}

// DefaultStaleIntervals is how many intervals without a result turn a
// cell grey when the test does not say.
const DefaultStaleIntervals = 2

// Verdict is a cell's colour and the reasons for it, worst first.
type Verdict struct {
	Colour  Colour
	Reasons []string
}

// Judge colours one half-cell: its last run, against its test's
// thresholds, as of now. A cell with no run is unmeasured; one whose
// last run is older than the test's stale intervals is grey; a failed run
// is red; a missed or aborted one amber; a finished one is judged by its
// values, the worst threshold winning. A value not measured is not
// judged. The RTT thresholds judge the p99 where it was measured
// (request-response, ping and tcp-connect tests), else a TCP test's mean
// RTT.
func Judge(c Cell, t Test, now time.Time) Verdict {
	if c.At.IsZero() {
		return Verdict{Unmeasured, []string{"no result yet"}}
	}
	stale := t.Thresholds.StaleIntervals
	if stale <= 0 {
		stale = DefaultStaleIntervals
	}
	if t.Interval > 0 {
		if age := now.Sub(c.At); age >= time.Duration(stale)*t.Interval {
			return Verdict{Grey, []string{fmt.Sprintf("no result for %d intervals of %s (last %s ago)",
				stale, units.DurationString(t.Interval), units.DurationString(age.Truncate(time.Second)))}}
		}
	}
	withReason := func(s string) string {
		if c.Reason == "" {
			return s
		}
		return s + ": " + c.Reason
	}
	switch c.State {
	case "finished":
	case "failed":
		return Verdict{Red, []string{withReason("last run failed")}}
	case "missed", "aborted":
		return Verdict{Amber, []string{withReason("last run " + c.State)}}
	default:
		return Verdict{Grey, []string{withReason(fmt.Sprintf("last run %s", orUnknown(c.State)))}}
	}
	v := Verdict{Colour: Green}
	var red, amber []string
	// check grades one figure against its red and amber bounds (0: none);
	// below says that a figure under a bound is the bad side.
	check := func(value, redAt, amberAt float64, below bool, name string, show func(float64) string) {
		worse, word := func(b float64) bool { return value > b }, "above"
		if below {
			worse, word = func(b float64) bool { return value < b }, "below"
		}
		switch {
		case redAt > 0 && worse(redAt):
			red = append(red, fmt.Sprintf("%s %s %s %s", name, show(value), word, show(redAt)))
		case amberAt > 0 && worse(amberAt):
			amber = append(amber, fmt.Sprintf("%s %s %s %s", name, show(value), word, show(amberAt)))
		}
	}
	th := t.Thresholds
	if measured(c.GoodputBps) {
		check(c.GoodputBps, th.GoodputRedBps, th.GoodputAmberBps, true, "goodput", rate)
	}
	if measured(c.LostPercent) {
		check(c.LostPercent, th.LossRedPercent, th.LossAmberPercent, false, "loss", percent)
	}
	if rtt, name := judgedRTT(c.Figures); rtt > 0 {
		check(float64(rtt), float64(th.RTTp99Red), float64(th.RTTp99Amber), false, name,
			func(x float64) string { return ms(time.Duration(x)) })
	}
	switch {
	case len(red) > 0:
		v.Colour = Red
	case len(amber) > 0:
		v.Colour = Amber
	default:
		return Verdict{Green, []string{"within every threshold"}}
	}
	v.Reasons = append(red, amber...)
	return v
}

// judgedRTT is the RTT the thresholds judge and its name: the p99 where
// measured, else the mean.
func judgedRTT(f Figures) (time.Duration, string) {
	if f.RTTp99 > 0 {
		return f.RTTp99, "RTT p99"
	}
	return f.RTTMean, "RTT mean"
}

func orUnknown(s string) string {
	if s == "" {
		return "in no known state"
	}
	return s
}

func measured(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// rate prints bits per second as iperf does ("941 Mbits/sec").
func rate(bps float64) string {
	return strings.TrimSpace(units.FormatRate(bps, units.AdaptiveBits))
}

func percent(p float64) string { return fmt.Sprintf("%.3g%%", p) }

func ms(d time.Duration) string { return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond)) }
