package impair

import (
	"math"
	"slices"
	"testing"
	"time"
)

type out struct {
	at     int64
	seq    int
	copies int
}

// sim drives a Direction with a fake clock: packet i (its payload is i)
// arrives at times[i] with the given size; Release runs before each arrival
// and then at every due time until the Direction is empty.
func sim(t *testing.T, cfg Config, start uint64, times []int64, size int) ([]out, []Verdict, Counters) {
	t.Helper()
	d, err := NewDirection[int](cfg, start, 7)
	if err != nil {
		t.Fatal(err)
	}
	var outs []out
	var now int64
	emit := func(p, copies int) { outs = append(outs, out{now, p, copies}) }
	verdicts := make([]Verdict, len(times))
	for i, at := range times {
		for {
			due, ok := d.NextDue()
			if !ok || due > at {
				break
			}
			now = due
			d.Release(now, emit)
		}
		now = at
		d.Release(now, emit)
		verdicts[i] = d.Arrive(now, i, size)
		if c := d.Counters(); !c.Balanced() {
			t.Fatalf("unbalanced after arrival %d: %+v", i, c)
		}
	}
	for {
		due, ok := d.NextDue()
		if !ok {
			break
		}
		if due > now {
			now = due
		}
		d.Release(now, emit)
	}
	c := d.Counters()
	if !c.Balanced() || c.QueuedPackets != 0 || c.QueuedBytes != 0 || c.QueuedDups != 0 {
		t.Fatalf("counters do not balance at the end: %+v", c)
	}
	return outs, verdicts, c
}

func evenly(n int, gap time.Duration) []int64 {
	ts := make([]int64, n)
	for i := range ts {
		ts[i] = int64(i) * int64(gap)
	}
	return ts
}

// receiverView computes what a receiver numbering packets in sending order
// would report: duplicates and RFC 4737 re-orderings.
func receiverView(outs []out) (received, dups, reordered int) {
	seen := map[int]bool{}
	next := 0
	for _, o := range outs {
		for c := 0; c < o.copies; c++ {
			if seen[o.seq] {
				dups++
				continue
			}
			seen[o.seq] = true
			received++
			if o.seq < next {
				reordered++
			} else {
				next = o.seq + 1
			}
		}
	}
	return
}

func TestPassThrough(t *testing.T) {
	outs, _, c := sim(t, Config{}, 1, evenly(1000, time.Microsecond), 100)
	if len(outs) != 1000 || c.In != 1000 || c.Out != 1000 || c.Dropped() != 0 || c.Delayed != 0 || c.Reordered != 0 {
		t.Fatalf("pass-through: %d outs, %+v", len(outs), c)
	}
	for i, o := range outs {
		if o.seq != i || o.at != int64(i)*1000 || o.copies != 1 {
			t.Fatalf("out %d = %+v", i, o)
		}
	}
	if c.InBytes != 100000 || c.OutBytes != 100000 {
		t.Fatalf("bytes: %+v", c)
	}
}

func TestFixedDelay(t *testing.T) {
	const delay = 107500 * time.Microsecond
	outs, _, c := sim(t, Config{Delay: delay}, 1, evenly(5000, 10*time.Microsecond), 1500)
	if len(outs) != 5000 || c.Delayed != 5000 {
		t.Fatalf("%d outs, %+v", len(outs), c)
	}
	for i, o := range outs {
		if o.seq != i || o.at != int64(i)*10000+int64(delay) {
			t.Fatalf("out %d = %+v, want seq %d at %d", i, o, i, int64(i)*10000+int64(delay))
		}
	}
}

func TestRateCapSerialises(t *testing.T) {
	// 8 Mbit/s is one byte per microsecond. Ten 1000-byte packets arrive at
	// once; the queue holds 5000 bytes, so five go and five are tail-dropped.
	cfg := Config{Rate: 8e6, QueueLimit: 5000}
	outs, vs, c := sim(t, cfg, 1, make([]int64, 10), 1000)
	if c.Out != 5 || c.DroppedQueue != 5 {
		t.Fatalf("%+v", c)
	}
	for i := 0; i < 10; i++ {
		want := Queued
		if i >= 5 {
			want = DroppedQueue
		}
		if vs[i] != want {
			t.Fatalf("verdict %d = %v, want %v", i, vs[i], want)
		}
	}
	for i, o := range outs {
		if want := int64(i+1) * 1000_000; o.at != want {
			t.Fatalf("packet %d left at %d, want %d", i, o.at, want)
		}
	}
	// With 38 bytes of framing overhead each packet takes 1038 µs.
	cfg.Overhead = 38
	cfg.QueueLimit = 1 << 20
	outs, _, _ = sim(t, cfg, 1, make([]int64, 3), 1000)
	if outs[2].at != 3*1038_000 {
		t.Fatalf("with overhead: third packet at %d", outs[2].at)
	}
}

func TestRateCapLongRun(t *testing.T) {
	// Offer 2 Gbit/s of 1500-byte packets to a 1 Gbit/s cap for one second:
	// what leaves in that second is the cap's rate, and the queue drops the rest.
	cfg := Config{Rate: 1e9, QueueLimit: 150000, Delay: 10 * time.Millisecond}
	gap := time.Duration(1500 * 8 / 2) // ns per packet at 2 Gbit/s
	n := int(time.Second / gap)
	outs, _, c := sim(t, cfg, 1, evenly(n, gap), 1500)
	var inWindow int
	for _, o := range outs {
		if o.at <= int64(time.Second+10*time.Millisecond) {
			inWindow++
		}
	}
	want := 1e9 / 8 / 1500
	if math.Abs(float64(inWindow)-want) > 2 {
		t.Fatalf("left within the second: %d, want %.0f", inWindow, want)
	}
	if c.DroppedQueue == 0 || c.Out+c.DroppedQueue != uint64(n) {
		t.Fatalf("%+v", c)
	}
	// The queue never holds more than its limit: the latest departure is at
	// most limit/rate after the last arrival, plus the delay.
	last := outs[len(outs)-1].at
	if maxEnd := int64(n-1)*int64(gap) + int64(150000*8) + int64(10*time.Millisecond); last > maxEnd {
		t.Fatalf("last departure %d after %d", last, maxEnd)
	}
	if b, ok := cfg.MaxHeldBytes(); !ok || b != 150000+1250000 {
		t.Fatalf("MaxHeldBytes = %d, %v", b, ok)
	}
}

func TestJitterUniformKeepOrder(t *testing.T) {
	const delay, jit = 50 * time.Millisecond, 5 * time.Millisecond
	times := evenly(20000, 100*time.Microsecond)
	cfg := Config{Delay: delay, Jitter: jit}
	outs, _, c := sim(t, cfg, 3, times, 200)
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var sum float64
	for _, o := range outs {
		d := o.at - times[o.seq]
		lo, hi = min(lo, d), max(hi, d)
		sum += float64(d)
	}
	if lo < int64(delay-jit) || hi > int64(delay+jit) {
		t.Fatalf("delays in [%d, %d], want within %v ± %v", lo, hi, delay, jit)
	}
	if mean := sum / float64(len(outs)); math.Abs(mean-float64(delay)) > float64(100*time.Microsecond) {
		t.Fatalf("mean delay %v", time.Duration(mean))
	}
	_, _, rx := receiverView(outs)
	if c.Reordered == 0 || uint64(rx) != c.Reordered {
		t.Fatalf("jitter without keep-order: router counted %d re-orderings, receiver %d", c.Reordered, rx)
	}

	cfg.KeepOrder = true
	outs, _, c = sim(t, cfg, 3, times, 200)
	if c.Reordered != 0 {
		t.Fatalf("keep-order re-ordered %d", c.Reordered)
	}
	for i := 1; i < len(outs); i++ {
		if outs[i].seq != outs[i-1].seq+1 || outs[i].at < outs[i-1].at {
			t.Fatalf("keep-order: out %d = %+v after %+v", i, outs[i], outs[i-1])
		}
	}
}

func TestJitterNormal(t *testing.T) {
	const delay, sd = 100 * time.Millisecond, 4 * time.Millisecond
	times := evenly(20000, time.Millisecond)
	outs, _, _ := sim(t, Config{Delay: delay, Jitter: sd, Distribution: Normal}, 5, times, 100)
	var s, s2 float64
	for _, o := range outs {
		d := float64(o.at-times[o.seq]) - float64(delay)
		s += d
		s2 += d * d
	}
	n := float64(len(outs))
	mean := s / n
	std := math.Sqrt(s2/n - mean*mean)
	if math.Abs(mean) > float64(200*time.Microsecond) || math.Abs(std-float64(sd)) > 0.05*float64(sd) {
		t.Fatalf("normal jitter: mean %v sd %v, want 0 and %v", time.Duration(mean), time.Duration(std), sd)
	}
}

func TestBernoulliLoss(t *testing.T) {
	const n = 100000
	outs, vs, c := sim(t, Config{Loss: 0.01}, 11, evenly(n, time.Microsecond), 64)
	lost := 0
	for _, v := range vs {
		if v == DroppedLoss {
			lost++
		}
	}
	if uint64(lost) != c.DroppedLoss || c.Out != uint64(len(outs)) || c.Out+c.DroppedLoss != n {
		t.Fatalf("counts: lost %d, %+v", lost, c)
	}
	// Binomial: mean 1000, sd ≈ 31.5.
	if lost < 1000-130 || lost > 1000+130 {
		t.Fatalf("lost %d of %d at 1%%", lost, n)
	}
}

// lossRuns returns the lengths of runs of consecutive lost packets.
func lossRuns(vs []Verdict) []int {
	var runs []int
	r := 0
	for _, v := range vs {
		if v == DroppedLoss {
			r++
		} else if r > 0 {
			runs = append(runs, r)
			r = 0
		}
	}
	if r > 0 {
		runs = append(runs, r)
	}
	return runs
}

// Acceptance test 5: Gilbert-Elliott burst loss gives loss runs whose mean
// length matches the parameters within 10% over 100,000 packets.
func TestGilbertElliottRuns(t *testing.T) {
	const n = 100000
	cases := []struct {
		name string
		ge   *GilbertElliott
	}{
		{"gilbert p=1% r=25%", Gilbert(0.01, 0.25)},
		{"gilbert p=0.5% r=50%", Gilbert(0.005, 0.5)},
		{"elliott p=2% r=20% bad=90% good=0.1%", &GilbertElliott{P: 0.02, R: 0.2, LossBad: 0.9, LossGood: 0.001}},
	}
	for _, tc := range cases {
		for start := uint64(1); start <= 5; start++ {
			_, vs, c := sim(t, Config{GE: tc.ge}, start, evenly(n, time.Microsecond), 64)
			runs := lossRuns(vs)
			total := 0
			for _, r := range runs {
				total += r
			}
			if uint64(total) != c.DroppedLoss {
				t.Fatalf("%s: runs add up to %d, counter %d", tc.name, total, c.DroppedLoss)
			}
			mean := float64(total) / float64(len(runs))
			want := tc.ge.ExpectedLossRun()
			if math.Abs(mean-want) > 0.1*want {
				t.Errorf("%s rand-start %d: mean loss run %.3f, want %.3f ± 10%%", tc.name, start, mean, want)
			}
			rate := float64(total) / n
			if wr := tc.ge.ExpectedLossRate(); math.Abs(rate-wr) > 0.2*wr {
				t.Errorf("%s rand-start %d: loss rate %.4f, want %.4f", tc.name, start, rate, wr)
			}
			if start == 1 {
				t.Logf("%s: %d runs, mean %.3f (model %.3f), loss %.4f (model %.4f)",
					tc.name, len(runs), mean, want, rate, tc.ge.ExpectedLossRate())
			}
		}
	}
}

func TestExpectedLossRunClosedForm(t *testing.T) {
	if got := Gilbert(0.01, 0.25).ExpectedLossRun(); math.Abs(got-4) > 1e-12 {
		t.Fatalf("simple Gilbert mean run %v, want 1/r = 4", got)
	}
	// Bernoulli as a degenerate GE: loss q in both states gives runs of
	// mean 1/(1-q).
	g := GilbertElliott{P: 0.3, R: 0.6, LossBad: 0.2, LossGood: 0.2}
	if got := g.ExpectedLossRun(); math.Abs(got-1.25) > 1e-12 {
		t.Fatalf("degenerate GE mean run %v, want 1.25", got)
	}
	if !math.IsNaN((GilbertElliott{P: 0.1, R: 0.1}).ExpectedLossRun()) {
		t.Fatal("no loss should give NaN")
	}
	if !math.IsInf((GilbertElliott{P: 1, R: 0, LossBad: 1}).ExpectedLossRun(), 1) {
		t.Fatal("absorbing bad state should give +Inf")
	}
}

func TestReorderGap(t *testing.T) {
	for _, gap := range []int{1, 3} {
		cfg := Config{Delay: 20 * time.Millisecond, Reorder: 0.01, ReorderGap: gap}
		times := evenly(50000, 20*time.Microsecond)
		outs, _, c := sim(t, cfg, 9, times, 500)
		_, _, rx := receiverView(outs)
		if c.Held < 350 || c.Held > 650 {
			t.Fatalf("gap %d: held %d of 50000 at 1%%", gap, c.Held)
		}
		if uint64(rx) != c.Reordered || c.Reordered == 0 {
			t.Fatalf("gap %d: router %d re-ordered (held %d), receiver %d", gap, c.Reordered, c.Held, rx)
		}
		// Under steady traffic an isolated hold is overtaken by exactly gap packets.
		pos := make(map[int]int, len(outs))
		for i, o := range outs {
			pos[o.seq] = i
		}
		exact := 0
		for s := 1; s+gap+1 < len(times); s++ {
			if pos[s]-pos[s-1] > 1 && pos[s+1] < pos[s] {
				if pos[s]-s == gap {
					exact++
				}
			}
		}
		if exact == 0 {
			t.Fatalf("gap %d: no hold was overtaken by exactly %d packets", gap, gap)
		}
	}
}

func TestReorderHoldTimeout(t *testing.T) {
	// Every packet is held and no later one ever comes: each leaves at its
	// hold deadline, in order, and none counts as re-ordered.
	cfg := Config{Reorder: 1, ReorderGap: 5, ReorderHold: 3 * time.Millisecond}
	outs, _, c := sim(t, cfg, 1, []int64{0, int64(time.Second)}, 100)
	if len(outs) != 2 || c.Reordered != 0 || c.Held != 2 {
		t.Fatalf("%+v %+v", outs, c)
	}
	if outs[0].at != int64(3*time.Millisecond) || outs[1].at != int64(time.Second+3*time.Millisecond) {
		t.Fatalf("hold deadlines: %+v", outs)
	}
}

func TestDuplicate(t *testing.T) {
	outs, _, c := sim(t, Config{Duplicate: 0.02, Delay: time.Millisecond}, 4, evenly(30000, 10*time.Microsecond), 300)
	rcv, dups, re := receiverView(outs)
	if uint64(dups) != c.Duplicated || rcv != 30000 || re != 0 || c.Out != 30000+c.Duplicated {
		t.Fatalf("receiver: %d received, %d dups, %d reordered; router %+v", rcv, dups, re, c)
	}
	if c.Duplicated < 500 || c.Duplicated > 700 {
		t.Fatalf("duplicated %d of 30000 at 2%%", c.Duplicated)
	}
}

func TestMixedGroundTruth(t *testing.T) {
	// Everything at once: the receiver's view matches the counters exactly.
	cfg := Config{Delay: 30 * time.Millisecond, Jitter: time.Millisecond, KeepOrder: true, Loss: 0.01,
		GE: Gilbert(0.001, 0.3), Reorder: 0.005, ReorderGap: 2, Duplicate: 0.003, Rate: 100e6, QueueLimit: 30000}
	times := evenly(60000, 100*time.Microsecond) // 120 Mbit/s offered
	outs, vs, c := sim(t, cfg, 42, times, 1500)
	rcv, dups, re := receiverView(outs)
	lost := 60000 - rcv
	if uint64(lost) != c.Dropped() || uint64(dups) != c.Duplicated || uint64(re) != c.Reordered {
		t.Fatalf("receiver lost %d dup %d reord %d; router %+v", lost, dups, re, c)
	}
	if c.DroppedQueue == 0 || c.DroppedLoss == 0 || c.Reordered == 0 || c.Duplicated == 0 {
		t.Fatalf("expected every kind of impairment: %+v", c)
	}
	var q int
	for _, v := range vs {
		if v == DroppedQueue {
			q++
		}
	}
	if uint64(q) != c.DroppedQueue {
		t.Fatal("queue verdicts and counter differ")
	}
}

func TestRepeatable(t *testing.T) {
	cfg := Config{Delay: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, Distribution: Normal, Loss: 0.02,
		GE: Gilbert(0.01, 0.3), Reorder: 0.01, ReorderGap: 2, Duplicate: 0.01, Rate: 50e6}
	times := evenly(20000, 150*time.Microsecond)
	a, va, ca := sim(t, cfg, 77, times, 1000)
	b, vb, cb := sim(t, cfg, 77, times, 1000)
	if !slices.Equal(a, b) || !slices.Equal(va, vb) || ca != cb {
		t.Fatal("same start gave different decisions")
	}
	c, _, _ := sim(t, cfg, 78, times, 1000)
	if slices.Equal(a, c) {
		t.Fatal("different starts gave identical runs")
	}
}

func TestMemoryLimit(t *testing.T) {
	d, err := NewDirection[int](Config{Delay: time.Second}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	d.SetMemoryLimit(10000)
	for i := 0; i < 20; i++ {
		v := d.Arrive(int64(i), i, 1000)
		if (i < 10) != (v == Queued) {
			t.Fatalf("packet %d: %v", i, v)
		}
	}
	c := d.Counters()
	if c.DroppedLimit != 10 || c.QueuedBytes != 10000 || !c.Balanced() {
		t.Fatalf("%+v", c)
	}
	freed := 0
	d.Drain(func(int) { freed++ })
	c = d.Counters()
	if freed != 10 || c.Discarded != 10 || !c.Balanced() || d.Len() != 0 {
		t.Fatalf("drain: freed %d, %+v", freed, c)
	}
}

func BenchmarkDirectionFixedDelay(b *testing.B) {
	d, _ := NewDirection[int](Config{Delay: 107 * time.Millisecond, Rate: 1e9, QueueLimit: 1 << 24}, 1, 1)
	var now int64
	emit := func(int, int) {}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now += 12000
		d.Arrive(now, i, 1500)
		d.Release(now, emit)
	}
}
