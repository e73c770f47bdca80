package group

import (
	"math"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
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
	want := []SumInterval{{0, 1, 1500 * 8}, {1, 2, 2000 * 8}, {2, 2.5, 500 * 8 / 0.5}}
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

func TestAggregateSkipsTheOmittedStart(t *testing.T) {
	common := time.Unix(1_000_000, 0)
	r := received(1000, 3)
	r.Local.Intervals[0].Omitted, r.Remote.Intervals[0].Omitted = true, true
	sum := Aggregate(common, []PairReport{{Result: r, StartedAt: common, Clock: &agent.Offset{}}})
	if len(sum.Intervals) != 3 || sum.Intervals[0].ReceivedBitsPerSecond != 0 || sum.Intervals[1].ReceivedBitsPerSecond != 8000 {
		t.Fatalf("intervals %+v", sum.Intervals)
	}
}

func TestStartSkewWithoutStarts(t *testing.T) {
	if s := StartSkew([]PairReport{{}, {}}); s != (Skew{}) {
		t.Fatalf("skew %+v", s)
	}
}
