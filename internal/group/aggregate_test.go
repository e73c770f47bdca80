package group

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// received builds a client→server result whose receiver got perInterval
// bytes in each of n one-second intervals.
func received(perInterval int64, n int) *result.Result {
	s := spec.Default()
	s.Interval = time.Second
	r := &result.Result{Spec: s,
		Local:  result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true, End: float64(n), Bytes: perInterval * int64(n)}}},
		Remote: result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1, End: float64(n), Bytes: perInterval * int64(n)}}},
	}
	for i := range n {
		iv := func(sender bool) result.Interval {
			return result.Interval{Index: i, Start: float64(i), End: float64(i + 1),
				Streams: []result.StreamInterval{{ID: 1, Sender: sender, Bytes: perInterval}}}
		}
		r.Local.Intervals = append(r.Local.Intervals, iv(true))
		r.Remote.Intervals = append(r.Remote.Intervals, iv(false))
	}
	return r
}

func TestAggregateOnTheCommonTimeBase(t *testing.T) {
	common := time.Unix(1_000_000, 0)
	pairs := []PairReport{
		{Result: received(1000, 2), StartedAt: common, Clock: &agent.Offset{UncertaintyNs: 1e6}},
		// Half a second late: its intervals straddle the common bins.
		{Result: received(1000, 2), StartedAt: common.Add(500 * time.Millisecond), Clock: &agent.Offset{UncertaintyNs: 2e6}},
		{Pair: Pair{}, Error: "set-up failed"}, // never ran: adds nothing
	}
	sum := Aggregate(common, pairs)
	want := []SumInterval{{Start: 0, End: 1, ReceivedBitsPerSecond: 1500 * 8}, {Start: 1, End: 2, ReceivedBitsPerSecond: 2000 * 8}, {Start: 2, End: 2.5, ReceivedBitsPerSecond: 500 * 8 / 0.5}}
	if len(sum.Intervals) != len(want) {
		t.Fatalf("intervals %+v", sum.Intervals)
	}
	for i, w := range want {
		g := sum.Intervals[i]
		if g.Start != w.Start || g.End != w.End || math.Abs(g.ReceivedBitsPerSecond-w.ReceivedBitsPerSecond) > 1e-6 {
			t.Errorf("interval %d = %+v, want %+v", i, g, w)
		}
	}
	if sum.ReceivedBitsPerSecond != 2*1000*8 {
		t.Errorf("total %v", sum.ReceivedBitsPerSecond)
	}
	skew := StartSkew(pairs)
	if skew.Seconds != 0.5 || math.Abs(skew.UncertaintySeconds-0.003) > 1e-12 {
		t.Errorf("skew %+v", skew)
	}
}

// A receiving server's clock starts half the control round trip after
// the pair's start: at a 200 ms RTT its rows land 0.1 s later on the
// common clock, and the first bin holds 0.9 of its first row. A pair
// whose client receives (-R) is not shifted.
func TestAggregateShiftsAServersRowsByHalfTheRTT(t *testing.T) {
	common := time.Unix(1_000_000, 0)
	fwd := received(1000, 2)
	fwd.ControlRTT = 200 * time.Millisecond
	sum := Aggregate(common, []PairReport{{Result: fwd, StartedAt: common, Clock: &agent.Offset{}}})
	want := []SumInterval{{Start: 0, End: 1, ReceivedBitsPerSecond: 900 * 8}, {Start: 1, End: 2, ReceivedBitsPerSecond: 1000 * 8}, {Start: 2, End: 2.1, ReceivedBitsPerSecond: 100 * 8 / 0.1}}
	if len(sum.Intervals) != len(want) {
		t.Fatalf("intervals %+v", sum.Intervals)
	}
	for i, w := range want {
		g := sum.Intervals[i]
		if math.Abs(g.Start-w.Start) > 1e-9 || math.Abs(g.End-w.End) > 1e-9 || math.Abs(g.ReceivedBitsPerSecond-w.ReceivedBitsPerSecond) > 1e-6 {
			t.Errorf("interval %d = %+v, want %+v", i, g, w)
		}
	}
	// The client receives: its rows are on its own clock, the pair's.
	rev := received(1000, 2)
	rev.ControlRTT = 200 * time.Millisecond
	for i := range rev.Remote.Intervals {
		rev.Local.Intervals[i].Streams[0].Sender, rev.Remote.Intervals[i].Streams[0].Sender = false, true
	}
	rev.Local.Streams[0].Sender, rev.Remote.Streams[0].Sender = false, true
	sum = Aggregate(common, []PairReport{{Result: rev, StartedAt: common, Clock: &agent.Offset{}}})
	if len(sum.Intervals) != 2 || sum.Intervals[0].ReceivedBitsPerSecond != 1000*8 || sum.Intervals[1].End != 2 {
		t.Fatalf("a receiving client's rows moved: %+v", sum.Intervals)
	}
}

// withOmit marks a result's first k intervals omitted, as a -O of k
// seconds does (the stream totals, as a pair reports them, leave them out).
func withOmit(r *result.Result, k int) *result.Result {
	r.Spec.Omit = time.Duration(k) * time.Second
	for i := range k {
		r.Local.Intervals[i].Omitted, r.Remote.Intervals[i].Omitted = true, true
	}
	n := len(r.Remote.Intervals)
	per := r.Remote.Intervals[0].Streams[0].Bytes
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		e.Streams[0].Start, e.Streams[0].Bytes = float64(k), per*int64(n-k)
	}
	return r
}

func TestAggregateMarksTheOmittedStart(t *testing.T) {
	common := time.Unix(1_000_000, 0)
	a, b := withOmit(received(1000, 4), 2), withOmit(received(3000, 4), 2)
	b.Remote.Intervals[0].Streams[0].Bytes = 500 // slow start: not the steady rate
	pairs := []PairReport{
		{Result: a, StartedAt: common, Clock: &agent.Offset{}},
		{Result: b, StartedAt: common, Clock: &agent.Offset{}},
	}
	sum := Aggregate(common, pairs)
	if len(sum.Intervals) != 4 {
		t.Fatalf("intervals %+v", sum.Intervals)
	}
	// Interval by interval, the aggregate is the pairs' sum, omitted rows
	// included and marked.
	for k, iv := range sum.Intervals {
		var want float64
		for _, p := range pairs {
			want += float64(p.Result.Remote.Intervals[k].Streams[0].Bytes) * 8
		}
		if iv.Start != float64(k) || iv.End != float64(k+1) || iv.ReceivedBitsPerSecond != want || iv.Omitted != (k < 2) {
			t.Errorf("interval %d = %+v, want %v bits/s, omitted %v", k, iv, want, k < 2)
		}
	}
	// The total leaves the omitted start out, as each pair's does.
	if want := 2 * (1000 + 3000) * 8 / 2.0; sum.ReceivedBitsPerSecond != want {
		t.Errorf("total %v, want %v", sum.ReceivedBitsPerSecond, want)
	}
	rep := &Report{Pairs: pairs, Sum: sum, Started: true, Start: common}
	var text bytes.Buffer
	if err := WriteText(&text, rep, 'k'); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if !strings.HasPrefix(line, "[SUM] ") || strings.Contains(line, "interval") || strings.Contains(line, "total") {
			continue
		}
		omitted := strings.Contains(line, "0.00-1.00") || strings.Contains(line, "1.00-2.00")
		if strings.HasSuffix(line, "(omitted)") != omitted || strings.Contains(line, " 0.00 Kbits") {
			t.Errorf("line %q: want the omitted mark on the first two rows only, and no zero rate", line)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	doc := jsondoc.Decode(t, js.Bytes())
	for k := range 4 {
		got, _ := jsondoc.At(t, doc, "sum", "intervals", k).(map[string]any)["omitted"].(bool)
		if got != (k < 2) {
			t.Errorf("JSON interval %d omitted %v", k, got)
		}
	}
}

func TestAggregateCutsAtAnOmitBetweenIntervals(t *testing.T) {
	if got, want := binEdges(1, 1.5, 3.6), []float64{0, 1, 1.5, 2.5, 3.5, 3.6}; !slices.Equal(got, want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
	if got, want := binEdges(1, 0, 2), []float64{0, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
	// The receivers' drain past the last full bin: a sliver joins the bin
	// before it, a tenth or more stays a bin of its own, and the omitted
	// start's end is never merged away.
	for _, c := range []struct {
		omit, last float64
		want       []float64
	}{
		{0, 3.03, []float64{0, 1, 2, 3.03}},
		{0, 3.2, []float64{0, 1, 2, 3, 3.2}},
		{1, 1.05, []float64{0, 1, 1.05}},
	} {
		if got := binEdges(1, c.omit, c.last); !slices.Equal(got, c.want) {
			t.Errorf("binEdges(1, %v, %v) = %v, want %v", c.omit, c.last, got, c.want)
		}
	}
	// A pair started late spreads across the omit's end: every byte
	// lands in some bin.
	common := time.Unix(1_000_000, 0)
	r := withOmit(received(1000, 3), 1)
	sum := Aggregate(common, []PairReport{{Result: r, StartedAt: common.Add(100 * time.Millisecond), Clock: &agent.Offset{}}})
	var bins float64
	for _, iv := range sum.Intervals {
		bins += iv.ReceivedBitsPerSecond * (iv.End - iv.Start) / 8
	}
	if math.Abs(bins-3000) > 1e-6 || !sum.Intervals[0].Omitted || sum.Intervals[1].Omitted {
		t.Fatalf("intervals %+v hold %v bytes", sum.Intervals, bins)
	}
}

func TestStartSkewWithoutStarts(t *testing.T) {
	if s := StartSkew([]PairReport{{}, {}}); s != (Skew{}) {
		t.Fatalf("skew %+v", s)
	}
}

// TestAggregateLeavesOutPairsOffTheClock: a pair whose rows cannot be
// placed on the controller's clock (no offset from its agent) is not
// spread over the common bins, which would add rows of different times;
// the sum says so, and its total still counts.
func TestAggregateLeavesOutPairsOffTheClock(t *testing.T) {
	common := time.Unix(1_000_000, 0)
	off := PairReport{Result: received(1000, 2), Pair: Pair{Sender: Endpoint{Host: "10.0.0.9", Port: 5201}, Receiver: Endpoint{Host: "10.0.0.2", Port: 5201}}}
	sum := Aggregate(common, []PairReport{
		{Result: received(1000, 2), StartedAt: common, Clock: &agent.Offset{}},
		off,
	})
	if len(sum.LeftOut) != 1 || !strings.Contains(sum.LeftOut[0], "10.0.0.9:5201→10.0.0.2:5201: its agent's clock offset is unknown") {
		t.Fatalf("left out %q", sum.LeftOut)
	}
	for _, iv := range sum.Intervals {
		if iv.ReceivedBitsPerSecond != 1000*8 {
			t.Errorf("a bin holds the pair off the clock: %+v", iv)
		}
	}
	if sum.ReceivedBitsPerSecond != 2*1000*8 {
		t.Errorf("total %v: both pairs' totals count", sum.ReceivedBitsPerSecond)
	}
	var b bytes.Buffer
	if err := WriteText(&b, &Report{Started: true, Sum: sum}, 'a'); err != nil || !strings.Contains(b.String(), "[SUM] rows leave out 10.0.0.9") {
		t.Errorf("text: %v\n%s", err, b.String())
	}
}

// [SUM]'s bound, which a group test run through a lab is held to
// (bench/truth's group cell): a bin spreads each pair's rows over the
// time they cover, so it never reads more than the pairs' fastest rows
// together, whatever their cut times, starts and the half round trip
// that shifts a receiving server's rows; and the bins keep every byte.
// A [SUM] row above the access links' arithmetic is therefore a pair's
// row above its own link, which that pair's row check names: the
// receivers' row cut a few ms late on a loaded host (lab.RowTolerance), or
// the lab's router releasing what it held while it was behind.
func TestAggregateNeverExceedsThePairsFastestRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 4))
	common := time.Unix(1_000_000, 0)
	for trial := range 200 {
		var pairs []PairReport
		var bound float64
		var totalBytes int64
		for range 1 + rng.IntN(4) {
			n := 2 + rng.IntN(10)
			r := received(0, n)
			r.ControlRTT = time.Duration(rng.IntN(250)) * time.Millisecond
			// Rows cut up to 30 ms late or early, the last a short tail.
			at := 0.0
			fastest := 0.0
			var pairBytes int64
			for i := range r.Remote.Intervals {
				end := float64(i+1) + (rng.Float64()-0.5)*0.06
				if i == n-1 {
					end = at + 0.01 + rng.Float64()*0.5
				}
				b := int64(rng.IntN(40_000_000))
				for _, e := range []*result.End{&r.Local, &r.Remote} {
					e.Intervals[i].Start, e.Intervals[i].End = at, end
					e.Intervals[i].Streams[0].Bytes = b
					e.Intervals[i].Tail = i == n-1
				}
				fastest = max(fastest, float64(b)*8/(end-at))
				pairBytes += b
				at = end
			}
			for _, e := range []*result.End{&r.Local, &r.Remote} {
				e.Streams[0].Bytes, e.Streams[0].End = pairBytes, at
			}
			bound += fastest
			totalBytes += pairBytes
			start := common.Add(time.Duration(rng.IntN(50)) * time.Millisecond)
			pairs = append(pairs, PairReport{Result: r, StartedAt: start, Clock: &agent.Offset{}})
		}
		sum := Aggregate(common, pairs)
		var binned float64
		for _, iv := range sum.Intervals {
			if iv.ReceivedBitsPerSecond > bound*(1+1e-9) {
				t.Fatalf("trial %d: [SUM] %.3f-%.3f reads %.0f bit/s, above the pairs' fastest rows together, %.0f", trial, iv.Start, iv.End, iv.ReceivedBitsPerSecond, bound)
			}
			binned += iv.ReceivedBitsPerSecond / 8 * (iv.End - iv.Start)
		}
		if math.Abs(binned-float64(totalBytes)) > 1e-6*float64(totalBytes)+1 {
			t.Fatalf("trial %d: the bins hold %.0f bytes, the pairs' rows %d", trial, binned, totalBytes)
		}
	}
}
