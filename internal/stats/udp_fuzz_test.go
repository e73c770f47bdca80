package stats

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// FuzzUDPReceiver feeds arbitrary arrivals and cuts (numbers near a moving
// cursor or anywhere, clocks that jump both ways, shared receive times)
// and checks the accounting invariants: every arrival is exactly one of
// received, late, duplicate or invalid; counts are non-negative; received
// never exceeds the distinct numbers seen; intervals, settled, add up to
// the totals; and at Final every number up to the highest received (or sentTotal) is
// either received or lost.
func FuzzUDPReceiver(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 4, 6, 0, 0, 3}, int64(-1))
	f.Add([]byte{0, 10, 0, 5, 0, 5, 6, 250, 0, 6, 0, 200}, int64(20))
	f.Add([]byte{1, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 1}, int64(3))
	f.Fuzz(func(t *testing.T, data []byte, sentTotal int64) {
		// Small limits, so that growth and forced loss happen too.
		r := newUDPReceiver(UDPConfig{LateThreshold: 100 * time.Nanosecond}, limits{minWindow: 64, maxWindow: 1 << 12, maxGaps: 16, maxRuns: 16})
		var sum counts
		var adds, cursor uint64
		var now int64
		distinct := map[uint64]bool{}
		for len(data) >= 2 {
			op, arg := data[0], data[1]
			data = data[2:]
			now += int64(int8(arg)) // clocks may go backwards
			switch op % 8 {
			case 7:
				u := r.Cut(now)
				checkUDP(t, u)
				sum.received += u.Received
				sum.lost += u.Lost
				sum.late += u.Late
				sum.dups += u.Duplicates
				sum.reordered += u.Reordered
				continue
			case 6:
				if len(data) < 8 {
					return
				}
				cursor = binary.LittleEndian.Uint64(data) // anywhere
				data = data[8:]
			default:
				cursor += uint64(int64(int8(arg)) / 8)
			}
			a := Arrival{Seq: cursor, SentNs: now - int64(op), RecvNs: now, SharedRecvTime: op&16 != 0}
			r.Add(a)
			adds++
			if a.Seq <= MaxSeq {
				distinct[a.Seq] = true
			}
			c := r.tot
			if got := uint64(c.received + c.late + c.dups + r.invalid); got != adds {
				t.Fatalf("after %d adds: received %d + late %d + dups %d + invalid %d", adds, c.received, c.late, c.dups, r.invalid)
			}
			if c.received > int64(len(distinct)) {
				t.Fatalf("received %d > %d distinct numbers", c.received, len(distinct))
			}
			if c.late > c.lost {
				t.Fatalf("late %d > lost %d", c.late, c.lost)
			}
		}
		// Whatever came after the last cut is in the totals, not in sum.
		tail := r.iv
		invalid := r.invalid
		u := r.Final(now, sentTotal)
		checkUDP(t, u)
		if u.Received+u.Late+u.Duplicates+u.Invalid != int64(adds) {
			t.Fatalf("final: %+v and invalid %d do not account for %d adds", countsOf(u), u.Invalid, adds)
		}
		for _, s := range r.Settlements() {
			sum.received += s.Received
			sum.lost += s.Lost
			sum.late += s.Late
			sum.dups += s.Duplicates
			sum.reordered += s.Reordered
		}
		if r.row == 0 { // no rows: everything is the open one's
			sum = tail
			sum.received -= u.Invalid - invalid // found invalid at Final
			sum.lost = u.Lost
		}
		if u.Received != sum.received || u.Late != sum.late ||
			u.Duplicates != sum.dups || u.Reordered != sum.reordered || u.Lost != sum.lost {
			t.Fatalf("settled intervals %+v do not add up to %+v", sum, countsOf(u))
		}
		if !r.started {
			if want := max(sentTotal, 0); u.Expected != want {
				t.Fatalf("nothing received: expected %d, want %d", u.Expected, want)
			}
			return
		}
		want := int64(r.top) + 1
		if sentTotal > want {
			want = sentTotal
		}
		if sentTotal >= 0 && sentTotal <= int64(r.top) && u.Expected != sentTotal {
			// Clamped: nothing at or above sentTotal was sent.
			t.Fatalf("expected %d (received %d + lost %d), want sentTotal %d", u.Expected, u.Received, u.Lost, sentTotal)
		}
		if sentTotal < 0 || sentTotal > int64(r.top) {
			if u.Expected != want {
				t.Fatalf("expected %d (received %d + lost %d), want %d", u.Expected, u.Received, u.Lost, want)
			}
		}
	})
}

func checkUDP(t *testing.T, u result.UDP) {
	t.Helper()
	for _, v := range []int64{u.Received, u.Lost, u.Late, u.Duplicates, u.Reordered, u.ReorderMaxExtent, u.JitterSamples} {
		if v < 0 {
			t.Fatalf("negative count in %+v", u)
		}
	}
	if u.Expected != u.Received+u.Lost {
		t.Fatalf("expected %d != %d + %d", u.Expected, u.Received, u.Lost)
	}
	// An arrival found invalid at Final has already counted for jitter and
	// re-ordering.
	if u.Reordered > u.Received+u.Invalid || (u.Received > 0 && u.JitterSamples > u.Received+u.Invalid) {
		t.Fatalf("reordered %d / jitter samples %d beyond received %d", u.Reordered, u.JitterSamples, u.Received)
	}
	if u.JitterSamples == 0 && u.JitterMs != 0 {
		t.Fatalf("jitter %v ms from no samples", u.JitterMs)
	}
	for _, p := range []*result.Percentiles{u.IPDV, u.PDV} {
		if p == nil {
			continue
		}
		if p.Count <= 0 || math.IsNaN(p.Mean) || !(p.Min <= p.P50 && p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.P999 && p.P999 <= p.Max) {
			t.Fatalf("bad percentiles %+v", *p)
		}
	}
}
