package campaign

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustList(t *testing.T, axis, list string) []Value {
	t.Helper()
	v, err := ParseList(axis, list)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func gridSpec(t *testing.T, order string, key int64) *Spec {
	return &Spec{
		Name: "grid", Targets: []string{"h"}, Repeat: 3, Order: order, ShuffleKey: key,
		Axes: []AxisValues{
			{AxisWindow, mustList(t, AxisWindow, "64K,1M,16M")},
			{AxisParallel, mustList(t, AxisParallel, "1,4")},
		},
	}
}

func TestParseValueBaseUnits(t *testing.T) {
	for _, c := range []struct {
		axis, in string
		want     float64
	}{
		{AxisWindow, "64K", 65536}, {AxisWindow, "16M", 16 << 20}, {AxisTime, "10", 10}, {AxisTime, "90s", 90},
		{AxisSpacing, "20us", 20e-6}, {AxisBitrate, "100m", 100e6}, {AxisParallel, "16", 16}, {AxisSetMSS, "1400", 1400},
		{AxisLength, "1472", 1472},
	} {
		v, err := ParseValue(c.axis, c.in)
		if err != nil || v.Num == nil || *v.Num != c.want || v.Label != c.in {
			t.Errorf("ParseValue(%s, %q) = %+v, %v; want %g", c.axis, c.in, v, err, c.want)
		}
	}
	for _, c := range [][2]string{{AxisWindow, "big"}, {AxisParallel, "0"}, {AxisTime, "0"}, {AxisDirection, "left"},
		{AxisProto, "sctp"}, {AxisCongestion, "Cu bic"}, {"colour", "red"}, {AxisParallel, ""}} {
		if _, err := ParseValue(c[0], c[1]); err == nil {
			t.Errorf("ParseValue(%s, %q) accepted", c[0], c[1])
		}
	}
	if v, err := ParseValue(AxisDirection, "bidir"); err != nil || v.Num != nil || !reflect.DeepEqual(Args(AxisDirection, v), []string{"--bidir"}) {
		t.Errorf("direction bidir: %+v %v", v, err)
	}
}

func TestPlanIsTheCrossProductRepeated(t *testing.T) {
	s := gridSpec(t, OrderSequential, 0)
	runs := s.Plan()
	if len(runs) != 3*2*3 {
		t.Fatalf("%d runs, want 18", len(runs))
	}
	ids := map[string]bool{}
	count := map[string]int{}
	for i, r := range runs {
		if r.Seq != i {
			t.Errorf("run %d has seq %d", i, r.Seq)
		}
		ids[r.ID] = true
		count[r.Point.Key()]++
	}
	if len(ids) != 18 || len(count) != 6 {
		t.Errorf("%d distinct IDs over %d points", len(ids), len(count))
	}
	for k, n := range count {
		if n != 3 {
			t.Errorf("point %s runs %d times", k, n)
		}
	}
	// Sequential: a point's repetitions follow each other, the first axis varies slowest.
	if runs[0].Point.Label() != "window=64K parallel=1" || runs[2].Rep != 3 || runs[3].Point.Label() != "window=64K parallel=4" {
		t.Errorf("sequential order starts %s, %s rep %d, %s", runs[0].Point.Label(), runs[2].Point.Label(), runs[2].Rep, runs[3].Point.Label())
	}
}

func TestShuffleFollowsItsKeyAndIDsDoNotDependOnOrder(t *testing.T) {
	a := gridSpec(t, OrderShuffle, 7).Plan()
	b := gridSpec(t, OrderShuffle, 7).Plan()
	c := gridSpec(t, OrderShuffle, 8).Plan()
	seq := gridSpec(t, OrderSequential, 0).Plan()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same shuffle key gave two orders")
	}
	order := func(rs []Run) []string {
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	if reflect.DeepEqual(order(a), order(c)) || reflect.DeepEqual(order(a), order(seq)) {
		t.Error("shuffling with another shuffle key, or not at all, gave the same order")
	}
	set := func(rs []Run) map[string]string {
		m := map[string]string{}
		for _, r := range rs {
			m[r.ID] = r.Point.Key() + fmt.Sprint(r.Rep)
		}
		return m
	}
	if !reflect.DeepEqual(set(a), set(seq)) {
		t.Error("a run's ID depends on the order")
	}
}

func TestPointKeyIsCanonical(t *testing.T) {
	a := Point{Target: "h", Settings: []Setting{{AxisWindow, mustList(t, AxisWindow, "1M")[0]}, {AxisTime, mustList(t, AxisTime, "60")[0]}}}
	b := Point{Target: "h", Settings: []Setting{{AxisTime, mustList(t, AxisTime, "1m")[0]}, {AxisWindow, mustList(t, AxisWindow, "1024K")[0]}}}
	if a.Key() != b.Key() {
		t.Errorf("keys differ: %s vs %s", a.Key(), b.Key())
	}
	if RunID("c", a.Key(), 1) == RunID("c", a.Key(), 2) || RunID("c", a.Key(), 1) == RunID("d", a.Key(), 1) {
		t.Error("run IDs must differ by repetition and campaign")
	}
}

func TestMissingSkipsFinished(t *testing.T) {
	runs := gridSpec(t, OrderShuffle, 3).Plan()
	done := map[string]bool{runs[0].ID: true, runs[5].ID: true}
	left := Missing(runs, func(id string) bool { return done[id] })
	if len(left) != len(runs)-2 {
		t.Fatalf("%d missing, want %d", len(left), len(runs)-2)
	}
	for _, r := range left {
		if done[r.ID] {
			t.Errorf("finished run %s planned again", r.ID)
		}
	}
	if left[0].ID != runs[1].ID {
		t.Error("missing runs are not in plan order")
	}
}

func TestEstimate(t *testing.T) {
	s := gridSpec(t, OrderSequential, 0)
	s.Axes = append(s.Axes, AxisValues{AxisTime, mustList(t, AxisTime, "10s,60s")})
	s.Pause = 5 * time.Second
	runs := s.Plan() // 36 runs, half 10 s, half 60 s
	got := s.Estimate(runs, timeAxisLength(10*time.Second), time.Second)
	want := 18*(10+1)*time.Second + 18*(60+1)*time.Second + 35*5*time.Second
	if got != want {
		t.Errorf("estimate %v, want %v", got, want)
	}
}

func TestValidate(t *testing.T) {
	s := gridSpec(t, OrderShuffle, 1)
	s.Axes = append(s.Axes, s.Axes[0])
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate axis: %v", err)
	}
	s = gridSpec(t, OrderShuffle, 1)
	s.Repeat = MaxRuns
	if err := s.Validate(); err == nil {
		t.Error("a campaign of millions of runs was accepted")
	}
}

// fakeClock sleeps by advancing a counter.
type fakeClock struct{ slept []time.Duration }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	return nil
}

func TestExecuteRetriesFailuresOnceAtTheEnd(t *testing.T) {
	runs := gridSpec(t, OrderSequential, 0).Plan()[:5]
	var calls []string
	clock := &fakeClock{}
	x := Executor{
		Pause: 2 * time.Second, Sleep: clock.Sleep,
		Run: func(_ context.Context, r Run, attempt int) error {
			calls = append(calls, fmt.Sprintf("%d/%d", r.Seq, attempt))
			switch {
			case r.Seq == 1: // fails, then succeeds on the retry
				if attempt == 1 {
					return errors.New("connection refused")
				}
			case r.Seq == 3: // fails twice
				return errors.New("no route")
			}
			return nil
		},
	}
	o := x.Execute(context.Background(), runs)
	want := []string{"0/1", "1/1", "2/1", "3/1", "4/1", "1/2", "3/2"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	if o.Ran != 7 || o.Finished != 4 || len(o.Failed) != 1 || o.Failed[0].Seq != 3 || o.Cancelled {
		t.Errorf("outcome %+v", o)
	}
	if len(clock.slept) != 6 || clock.slept[0] != 2*time.Second {
		t.Errorf("paused %v, want 6 × 2s (between runs, not before the first)", clock.slept)
	}
}

// Ctrl-C during a run stops the campaign; the run it cut short counts as
// aborted, neither finished nor failed.
func TestExecuteStopsWhenCancelled(t *testing.T) {
	runs := gridSpec(t, OrderSequential, 0).Plan()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	x := Executor{Run: func(ctx context.Context, r Run, attempt int) error {
		n++
		if n == 3 {
			cancel() // Ctrl-C during the third run
			return ctx.Err()
		}
		return nil
	}}
	o := x.Execute(ctx, runs)
	if !o.Cancelled || o.Ran != 3 || o.Finished != 2 || o.Aborted != 1 || len(o.Failed) != 0 || n != 3 {
		t.Errorf("outcome %+v after %d calls", o, n)
	}
}

// Ctrl-C just after a run ended well: the run counts as finished (it was
// stored so), not aborted.
func TestExecuteCancelledAsARunEnds(t *testing.T) {
	runs := gridSpec(t, OrderSequential, 0).Plan()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x := Executor{Run: func(context.Context, Run, int) error {
		cancel()
		return nil
	}}
	o := x.Execute(ctx, runs)
	if !o.Cancelled || o.Ran != 1 || o.Finished != 1 || o.Aborted != 0 {
		t.Errorf("outcome %+v", o)
	}
}

// Ctrl-C during the pause between runs cuts no run short.
func TestExecuteCancelledBetweenRuns(t *testing.T) {
	runs := gridSpec(t, OrderSequential, 0).Plan()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x := Executor{Pause: time.Second, Run: func(context.Context, Run, int) error { return nil },
		Sleep: func(ctx context.Context, _ time.Duration) error {
			cancel() // Ctrl-C during the first pause
			return ctx.Err()
		}}
	o := x.Execute(ctx, runs)
	if !o.Cancelled || o.Ran != 1 || o.Finished != 1 || o.Aborted != 0 {
		t.Errorf("outcome %+v", o)
	}
}

func TestEstimateUDPmonCount(t *testing.T) {
	s := &Spec{Name: "u", Targets: []string{"h"}, Repeat: 1, Order: OrderSequential, Count: 100000,
		Axes: []AxisValues{{AxisSpacing, mustList(t, AxisSpacing, "0,10us,40us")}}}
	got := s.Estimate(s.Plan(), timeAxisLength(10*time.Second), time.Second)
	want := 3*time.Second + time.Second + 4*time.Second // 100000 × 10 µs, 100000 × 40 µs, plus 1 s each
	if got != want {
		t.Errorf("estimate %v, want %v", got, want)
	}
}

// timeAxisLength is a run's length read from its time axis, or
// defaultTime without one.
func timeAxisLength(defaultTime time.Duration) func(Run) time.Duration {
	return func(r Run) time.Duration {
		if v, ok := r.Point.Value(AxisTime); ok && v.Num != nil {
			return time.Duration(*v.Num * float64(time.Second))
		}
		return defaultTime
	}
}
