package stats

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// event is one thing the receiver sees: an arrival or an interval cut.
type event struct {
	cut  bool
	t    int64
	seq  uint64
	sent int64
}

// impair builds a randomized arrival timeline for n datagrams sent every
// 10 µs: drops (single and bursts), duplicates, re-ordering by a few
// positions, datagrams delayed past the late threshold, a dropped tail,
// and a cut every cutEvery.
func impair(rng *rand.Rand, n int, late, cutEvery int64) []event {
	const gap, base = 10_000, 50_000
	var ev []event
	for i := 0; i < n; i++ {
		if i > n-50 && rng.IntN(2) == 0 {
			continue // tail loss
		}
		switch p := rng.Float64(); {
		case p < 0.01:
			continue
		case p < 0.0105:
			i += rng.IntN(500) // a burst
			continue
		}
		sent := int64(i) * gap
		delay := int64(base)
		switch p := rng.Float64(); {
		case p < 0.02:
			delay += int64(1+rng.IntN(50)) * gap // re-ordered
		case p < 0.022:
			delay += late + rng.Int64N(late) // late (or, if sent just before a gap, re-ordered)
		}
		ev = append(ev, event{t: sent + delay, seq: uint64(i), sent: sent})
		if rng.Float64() < 0.005 {
			ev = append(ev, event{t: sent + delay + rng.Int64N(30*gap), seq: uint64(i), sent: sent})
		}
	}
	end := int64(n)*gap + 3*late
	for t := cutEvery; t < end; t += cutEvery {
		ev = append(ev, event{cut: true, t: t})
	}
	// Stable: same-time events keep generation order, cuts after arrivals.
	slices.SortStableFunc(ev, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	return ev
}

// truth is what the definitions say about a timeline, computed naively.
type truth struct {
	intervals []counts // one per cut, as the cut reports it
	settled   []counts // the same rows once the stream is over
	total     counts
}

// groundTruth: a number is due in the row in which a higher number
// revealed it missing. At a cut, a row's loss is its numbers still missing
// then; settled, those that never arrived before their deadline (detection
// plus the late threshold), and for the last row the tail above the
// highest number received.
func groundTruth(ev []event, n int, late int64) truth {
	var tr truth
	iv := 0
	tr.intervals = make([]counts, 1)
	arrived := make([]bool, n)
	detect := make([]int64, n)
	detectRow := make([]int, n)
	detected := make([]bool, n)
	firstEvent := make([]int, n) // event index of the first arrival
	top := -1
	var recvSeqs []uint64 // received datagrams in arrival order
	var prefixMax []uint64
	firstAt := make([]int64, n)
	var cutEvents []int
	for x, e := range ev {
		if e.cut {
			iv++
			cutEvents = append(cutEvents, x)
			tr.intervals = append(tr.intervals, counts{})
			continue
		}
		c := &tr.intervals[iv]
		s := int(e.seq)
		if s > top {
			for k := top + 1; k < s; k++ {
				detect[k], detected[k], detectRow[k] = e.t, true, iv
			}
			top = s
		}
		if !arrived[s] {
			firstAt[s], firstEvent[s] = e.t, x
		}
		switch {
		case arrived[s]:
			c.dups++
		case detected[s] && e.t >= detect[s]+late:
			arrived[s] = true
			c.late++
		default:
			arrived[s] = true
			c.received++
			j := len(recvSeqs)
			if detected[s] {
				c.reordered++
				i := sort.Search(j, func(i int) bool { return prefixMax[i] > e.seq })
				c.maxExtent = max(c.maxExtent, int64(j-i))
			}
			m := e.seq
			if j > 0 {
				m = max(m, prefixMax[j-1])
			}
			recvSeqs = append(recvSeqs, e.seq)
			prefixMax = append(prefixMax, m)
		}
	}
	// What came after the last cut settles into the last row.
	open := tr.intervals[len(cutEvents)]
	tr.intervals = tr.intervals[:len(cutEvents)]
	tr.settled = slices.Clone(tr.intervals)
	last := len(tr.settled) - 1
	tr.settled[last].received += open.received
	tr.settled[last].late += open.late
	tr.settled[last].dups += open.dups
	tr.settled[last].reordered += open.reordered
	for k := 0; k < n; k++ {
		if !detected[k] {
			if k > top {
				tr.settled[last].lost++ // the tail
				tr.total.lost++
			}
			continue
		}
		onTime := arrived[k] && firstAt[k] < detect[k]+late
		row := detectRow[k]
		if !onTime {
			tr.settled[min(row, last)].lost++
			tr.total.lost++
		}
		if row <= last && (!onTime || firstEvent[k] > cutEvents[row]) {
			tr.intervals[row].lost++ // still missing at the row's cut
		}
	}
	for _, c := range append(tr.intervals, open) {
		tr.total.received += c.received
		tr.total.late += c.late
		tr.total.dups += c.dups
		tr.total.reordered += c.reordered
		tr.total.maxExtent = max(tr.total.maxExtent, c.maxExtent)
	}
	return tr
}

// TestUDPReceiverRandomized checks exact counts, per interval and in total,
// against the ground truth of randomized impairments.
func TestUDPReceiverRandomized(t *testing.T) {
	tests := []struct {
		name  string
		start uint64
		n     int
		late  time.Duration
		lim   limits
	}{
		{"rng 1", 1, 100_000, 2 * time.Millisecond, defaultLimits},
		{"rng 2 long threshold", 2, 100_000, 20 * time.Millisecond, defaultLimits},
		{"rng 3 growing window", 3, 100_000, 20 * time.Millisecond, limits{minWindow: 64, maxWindow: 1 << 27, maxGaps: 1 << 20, maxRuns: 1 << 20}},
	}
	if testing.Short() {
		tests = tests[:1]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tt.start, 99))
			late := int64(tt.late)
			ev := impair(rng, tt.n, late, 50*ms)
			want := groundTruth(ev, tt.n, late)
			r := newUDPReceiver(UDPConfig{LateThreshold: tt.late}, tt.lim)
			iv := 0
			for _, e := range ev {
				if e.cut {
					if got := countsOf(r.Cut(e.t)); got != want.intervals[iv] {
						t.Fatalf("interval %d: %+v, want %+v", iv, got, want.intervals[iv])
					}
					iv++
					continue
				}
				r.Add(Arrival{Seq: e.seq, SentNs: e.sent, RecvNs: e.t})
			}
			u := r.Final(ev[len(ev)-1].t, int64(tt.n))
			if got := countsOf(u); got != want.total {
				t.Fatalf("total: %+v, want %+v", got, want.total)
			}
			// The rows, settled, are the truth's, and add up to the totals.
			settled := slices.Clone(want.intervals)
			for _, s := range r.Settlements() {
				c := &settled[s.Index]
				c.received += s.Received
				c.lost += s.Lost
				c.late += s.Late
				c.dups += s.Duplicates
				c.reordered += s.Reordered
			}
			var sum counts
			for k, c := range settled {
				if c != want.settled[k] {
					t.Fatalf("row %d settled %+v, want %+v", k, c, want.settled[k])
				}
				sum.received += c.received
				sum.lost += c.lost
			}
			if sum.received != u.Received || sum.lost != u.Lost {
				t.Fatalf("settled rows sum to %+v, totals %+v", sum, countsOf(u))
			}
			if u.Expected != int64(tt.n) {
				t.Errorf("expected %d, want %d", u.Expected, tt.n)
			}
			if u.JitterSamples != u.Received-1 {
				t.Errorf("jitter samples %d, want %d", u.JitterSamples, u.Received-1)
			}
			if want.total.late == 0 || want.total.reordered == 0 || want.total.dups == 0 || want.total.lost == 0 {
				t.Errorf("the impairments did not exercise every count: %+v", want.total)
			}
			t.Logf("%+v, window %d", want.total, r.seen.size)
		})
	}
}
