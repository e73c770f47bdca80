package emit

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// clocksNotCompared is what every one-way figure taken across the two
// ends' clocks says when the clocks were not compared (docs/metrics.md,
// "One-way delay"): UDP's relative one-way delay and TCP's --trip-times.
const clocksNotCompared = "clocks not compared"

// tripClockNote says what a trip-times figure rests on, and whether the
// figures themselves show the clocks disagree.
func tripClockNote(t *result.TripTimes) string {
	if t.Unsynchronised() {
		return fmt.Sprintf("%s: %s blocks arrived before they were sent, the clocks are not synchronised and the figures are off by their offset",
			clocksNotCompared, units.Thousands(t.Negative))
	}
	return clocksNotCompared + ": true only as far as the two clocks agree"
}

// writeTrips ends a flow's details with its receiver's --trip-times
// figures over the test: write-to-read latency per block (-l).
func writeTrips(l *textLines, f result.Flow, tag string, format units.Format) {
	s := f.Received
	if s == nil || s.TripTimes == nil {
		return
	}
	l.add("%s %s", tag, tripSummary(s.TripTimes, s.Bytes, s.Seconds(), format))
}

// tripSummary is the summary line of one stream's trip times.
func tripSummary(t *result.TripTimes, bytes int64, seconds float64, format units.Format) string {
	var b strings.Builder
	fmt.Fprintf(&b, "trip times (write to read, %s blocks): ", units.Thousands(t.Count))
	if t.Count == 0 {
		b.WriteString("none timed")
	} else {
		fmt.Fprintf(&b, "mean %s, min %s, max %s, stdev %s", micros(t.MeanUs), micros(t.MinUs), micros(t.MaxUs), micros(t.StdevUs))
		if p := t.Histogram; p != nil {
			fmt.Fprintf(&b, ", p50 %s, p90 %s, p99 %s, p99.9 %s", micros(p.P50), micros(p.P90), micros(p.P99), micros(p.P999))
		}
		if inP := t.InFlightBytes(bytes, seconds); inP > 0 && !t.Unsynchronised() {
			fmt.Fprintf(&b, ", in flight %s (Little's law)", strings.TrimSpace(units.FormatTransfer(inP, format)))
		}
	}
	if t.BadBlocks > 0 {
		fmt.Fprintf(&b, ", %s blocks without a stamp or out of sequence", units.Thousands(t.BadBlocks))
	}
	fmt.Fprintf(&b, " (%s)", tripClockNote(t))
	return b.String()
}

// iperf2Trip is iperf2 -e's trip-times columns of a row: latency
// avg/min/max/stdev in ms, (blocks timed/block size), the bytes in
// flight by Little's law and NetPwr (bytes per second over the mean
// latency); "" without figures.
func iperf2Trip(t *result.TripTimes, length int, bytes int64, seconds float64, format units.Format) string {
	if t == nil || t.Count == 0 {
		return ""
	}
	s := fmt.Sprintf("  %.3f/%.3f/%.3f/%.3f ms (%d/%d)", t.MeanUs/1e3, t.MinUs/1e3, t.MaxUs/1e3, t.StdevUs/1e3, t.Count, length)
	if t.Unsynchronised() {
		return s + " (clocks unsynchronised)"
	}
	if inP := t.InFlightBytes(bytes, seconds); inP > 0 {
		s += " " + strings.TrimSpace(units.FormatTransfer(inP, format))
		rate := result.Rate(bytes, seconds)
		s += " " + fmt.Sprintf("%.0f", 1e-6*(rate/8)/(t.MeanUs*1e-6))
	}
	return s
}

// iperf2TripColumns names iperf2Trip's columns, with --trip-times.
func iperf2TripColumns(r *result.Result) string {
	if !r.Spec.TripTimes {
		return ""
	}
	return "  Latency avg/min/max/stdev (cnt/size) inP NetPwr"
}

// withTrip puts a row's trip-times columns at the end of its line.
func withTrip(line, trip string) string {
	if trip == "" {
		return line
	}
	return strings.TrimSuffix(line, "\n") + trip + "\n"
}
