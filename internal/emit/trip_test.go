package emit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// withTrips gives r's receiving streams and their rows trip times; the
// rows' blocks add up to the totals'.
func withTrips(r *result.Result, negative int64) *result.Result {
	r.Spec.TripTimes = true
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := range e.Streams {
			if s := &e.Streams[i]; !s.Sender {
				s.TripTimes = &result.TripTimes{Count: 300, MeanUs: 9800, MinUs: 9500, MaxUs: 12500, StdevUs: 400, Negative: negative,
					Histogram: &result.Percentiles{Count: 300 - negative, Min: 9500, P50: 9700, P90: 10100, P99: 12000, P999: 12500, Max: 12500}}
			}
		}
		for i := range e.Intervals {
			for j := range e.Intervals[i].Streams {
				if si := &e.Intervals[i].Streams[j]; !si.Sender {
					si.TripTimes = &result.TripTimes{Count: 100, MeanUs: 9800, MinUs: 9500, MaxUs: 12500, StdevUs: 400, Negative: negative / 3}
				}
			}
		}
	}
	return r
}

func TestTextTripTimesSummary(t *testing.T) {
	out := summaryText(t, withTrips(forwardResult(), 0))
	want := "[  1] trip times (write to read, 300 blocks): mean 9.80 ms, min 9.50 ms, max 12.50 ms, stdev 400.0 µs, p50 9.70 ms, p90 10.10 ms, p99 12.00 ms, p99.9 12.50 ms, in flight "
	if !strings.Contains(out, want) || !strings.Contains(out, "(clocks not compared: true only as far as the two clocks agree)") {
		t.Errorf("summary lacks %q and the clock note:\n%s", want, out)
	}
	bad := summaryText(t, withTrips(forwardResult(), 30))
	if !strings.Contains(bad, "30 blocks arrived before they were sent, the clocks are not synchronised") || strings.Contains(bad, "in flight") {
		t.Errorf("negative latencies: want the clocks called unsynchronised and no in-flight figure:\n%s", bad)
	}
	if strings.Contains(summaryText(t, forwardResult()), "trip times") {
		t.Error("a test without --trip-times shows trip times")
	}
}

// -e: every row of the receiver's flows carries iperf2's latency
// columns, after the column header names them.
func TestIperf2EnhancedTripTimes(t *testing.T) {
	out := renderIperf2(t, &Iperf2Enhanced{W: &bytes.Buffer{}}, withTrips(parallelResult(), 0))
	if !strings.Contains(out, "NetPwr  Latency avg/min/max/stdev (cnt/size) inP NetPwr\n") {
		t.Errorf("no latency columns in the header:\n%s", out)
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[  ") && strings.Contains(l, " sec ") {
			rows++
			if !strings.Contains(l, " 9.800/9.500/12.500/0.400 ms (") {
				t.Errorf("row without its latency columns: %q", l)
			}
		}
	}
	if rows == 0 {
		t.Fatalf("no stream rows:\n%s", out)
	}
	neg := renderIperf2(t, &Iperf2Enhanced{W: &bytes.Buffer{}}, withTrips(parallelResult(), 30))
	if !strings.Contains(neg, "(clocks unsynchronised)") {
		t.Errorf("negative latencies not called unsynchronised:\n%s", neg)
	}
}
