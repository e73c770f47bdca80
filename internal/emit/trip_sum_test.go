package emit

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// tripOf is the figures a receiver reports for these latencies (µs), as
// tcpflow's reader computes them: mean, sample stdev, extremes.
func tripOf(lat []float64) *result.TripTimes {
	t := &result.TripTimes{Count: int64(len(lat)), MinUs: math.Inf(1), MaxUs: math.Inf(-1)}
	var sum float64
	for _, v := range lat {
		sum += v
		t.MinUs, t.MaxUs = min(t.MinUs, v), max(t.MaxUs, v)
	}
	t.MeanUs = sum / float64(len(lat))
	var ss float64
	for _, v := range lat {
		ss += (v - t.MeanUs) * (v - t.MeanUs)
	}
	if len(lat) > 1 {
		t.StdevUs = math.Sqrt(ss / float64(len(lat)-1))
	}
	return t
}

// latencyCols reads a -e row's "avg/min/max/stdev ms (cnt/size)".
var latencyCols = regexp.MustCompile(`  ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms \((\d+)/\d+\)`)

// TestIperf2EnhancedSumLatency: with several streams, each [SUM] row of
// -e carries latency columns, and they are the figures of all the
// streams' blocks taken together, computed here from the latencies
// themselves: so the SUM's min is at most every stream's and its max at
// least every stream's, its count their sum, and its mean and stdev
// those of the union (not an average of the streams' figures, which
// differ here in count, spread and level).
func TestIperf2EnhancedSumLatency(t *testing.T) {
	r := parallelResult()
	r.Spec.TripTimes = true
	// Stream 1's blocks are quick and many, stream 2's slow and few.
	lat := map[int][]float64{}
	for i := 0; i < 400; i++ {
		lat[1] = append(lat[1], 2000+float64(i%37)*11)
	}
	for i := 0; i < 60; i++ {
		lat[2] = append(lat[2], 9000+float64(i*i%53)*90)
	}
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := range e.Streams {
			if s := &e.Streams[i]; !s.Sender {
				s.TripTimes = tripOf(lat[s.ID])
			}
		}
		for i := range e.Intervals {
			for j := range e.Intervals[i].Streams {
				if si := &e.Intervals[i].Streams[j]; !si.Sender {
					si.TripTimes = tripOf(lat[si.ID])
				}
			}
		}
	}
	want := tripOf(append(append([]float64{}, lat[1]...), lat[2]...))
	out := renderIperf2(t, &Iperf2Enhanced{W: &bytes.Buffer{}}, r)
	sums := 0
	var streams [][]string
	for _, line := range strings.Split(out, "\n") {
		m := latencyCols.FindStringSubmatch(line)
		switch {
		case strings.HasPrefix(line, "[SUM]") && m == nil:
			t.Errorf("[SUM] row without latency columns: %q", line)
		case strings.HasPrefix(line, "[SUM]"):
			sums++
			got := floats(t, m[1:6])
			if got[4] != float64(want.Count) {
				t.Errorf("SUM count %v, want %d (both streams' blocks)", got[4], want.Count)
			}
			for i, w := range []float64{want.MeanUs, want.MinUs, want.MaxUs, want.StdevUs} {
				if math.Abs(got[i]-w/1e3) > 0.0005 {
					t.Errorf("SUM %s %.3f ms, want %.3f ms (of the blocks together)", []string{"avg", "min", "max", "stdev"}[i], got[i], w/1e3)
				}
			}
			for _, s := range streams {
				st := floats(t, s[1:6])
				if got[1] > st[1] || got[2] < st[2] {
					t.Errorf("SUM min/max %.3f/%.3f outside a stream's %.3f/%.3f", got[1], got[2], st[1], st[2])
				}
			}
			streams = nil
		case m != nil:
			streams = append(streams, m)
		}
	}
	if sums == 0 {
		t.Fatalf("no [SUM] rows:\n%s", out)
	}
	// An average of the two streams' means would be far from the union's.
	if naive := (tripOf(lat[1]).MeanUs + tripOf(lat[2]).MeanUs) / 2; math.Abs(naive-want.MeanUs) < 1000 {
		t.Fatalf("the fixture does not tell a merge from an average: %v vs %v", naive, want.MeanUs)
	}
}

func floats(t *testing.T, s []string) []float64 {
	t.Helper()
	out := make([]float64, len(s))
	for i, v := range s {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(fmt.Errorf("column %q: %w", v, err))
		}
		out[i] = f
	}
	return out
}
