package flowrun

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// row is interval i of a test cut every 10 ms, two streams, stream 1
// moving i bytes and stream 2 one.
func row(i int, omitted, tail bool) result.Interval {
	return result.Interval{
		Index: i, Start: float64(i) / 100, End: float64(i+1) / 100, Omitted: omitted, Tail: tail,
		Streams: []result.StreamInterval{{ID: 1, Bytes: int64(i)}, {ID: 2, Bytes: 1, Retransmits: 1}},
	}
}

func TestKeptRowsStayWithinTheCapAndAddUp(t *testing.T) {
	const n, limit, omitted = 100_000, 64, 10
	k := keptRows{max: limit}
	var live []result.Interval // what onInterval saw: must not change after
	for i := range n {
		iv := row(i, i < omitted, i == n-1)
		k.add(iv)
		if i < 3 {
			live = append(live, iv)
		}
		if len(k.rows) > limit {
			t.Fatalf("after %d rows: %d kept, cap %d", i+1, len(k.rows), limit)
		}
	}
	var b1, b2 int64
	for i, r := range k.rows {
		for _, s := range r.Streams {
			if s.ID == 1 {
				b1 += s.Bytes
			} else {
				b2 += s.Bytes
			}
		}
		if i > 0 && r.Start != k.rows[i-1].End {
			t.Fatalf("row %d starts at %v, the row before ends at %v", i, r.Start, k.rows[i-1].End)
		}
		if r.Omitted != (r.Index < omitted) {
			t.Fatalf("row %d (index %d) omitted = %v: an omitted row was joined with a measured one", i, r.Index, r.Omitted)
		}
	}
	if want := int64(n) * (n - 1) / 2; b1 != want || b2 != n {
		t.Fatalf("kept rows add up to %d and %d bytes, want %d and %d", b1, b2, want, n)
	}
	if last := k.rows[len(k.rows)-1]; !last.Tail || last.Index != n-1 {
		t.Fatalf("last kept row %+v: want the tail alone", last)
	}
	if k.rows[0].Start != 0 || k.rows[len(k.rows)-1].End != float64(n)/100 {
		t.Fatalf("kept rows span %v to %v", k.rows[0].Start, k.rows[len(k.rows)-1].End)
	}
	for i, iv := range live {
		if iv.Streams[0].Bytes != int64(i) {
			t.Fatalf("row %d as the live observer saw it changed: %+v", i, iv.Streams)
		}
	}
	if j := k.joined(); j < n/limit || j > 4*n/limit {
		t.Fatalf("rows joined %d at a time, want about %d", j, 2*n/limit)
	}
}

func TestKeptRowsWithoutCapKeepEveryRow(t *testing.T) {
	var k keptRows
	for i := range 1000 {
		k.add(row(i, false, false))
	}
	if len(k.rows) != 1000 || k.joined() != 1 {
		t.Fatalf("%d rows kept, joined %d: want every row as it was", len(k.rows), k.joined())
	}
	in := []result.UDPSettlement{{Index: 5, Lost: 1}}
	if out := k.settle(in); len(out) != 1 || out[0].Index != 5 {
		t.Fatalf("settlements moved without joined rows: %+v", out)
	}
}

func TestSettlementsMoveToTheRowThatHoldsTheirInterval(t *testing.T) {
	k := keptRows{max: 16}
	for i := range 100 {
		k.add(row(i, false, false))
	}
	in := []result.UDPSettlement{{Index: 97, Lost: 1}, {Index: 98, Lost: 2, Received: 1}, {Index: 3, Late: 1}}
	out := k.settle(in)
	holder := func(idx int) int {
		for i := len(k.rows) - 1; i >= 0; i-- {
			if k.rows[i].Index <= idx {
				return k.rows[i].Index
			}
		}
		return -1
	}
	var lost int64
	for _, s := range out {
		found := false
		for _, r := range k.rows {
			found = found || r.Index == s.Index
		}
		if !found {
			t.Fatalf("settlement for index %d names no kept row", s.Index)
		}
		lost += s.Lost
	}
	if lost != 3 || holder(97) != holder(98) || len(out) != 2 {
		t.Fatalf("settlements %+v: want 97 and 98 on one row, 3 lost in all", out)
	}
}

func TestKeptStreamRowsCharge(t *testing.T) {
	s := spec.Default()
	s.Streams = 128
	s.Interval = 10 * time.Millisecond
	s.Duration = 24 * time.Hour
	if got := KeptStreamRows(s, 0, ServerStreamRows); got != 512*128 {
		t.Fatalf("-P 128 -i 0.01 -t 86400: %d stream rows charged, want the cap's 512 rows × 128", got)
	}
	if got := KeptStreamRows(s, 0, 0); got != (8_640_000+2)*128 {
		t.Fatalf("without a cap: %d stream rows, want every row", got)
	}
	s.Streams, s.Duration, s.Interval = 1, 10*time.Second, time.Second
	if got := KeptStreamRows(s, 0, ServerStreamRows); got != 12 {
		t.Fatalf("-t 10 -i 1: %d stream rows, want 12", got)
	}
	s.Duration, s.Bytes = 0, 1<<30
	if got := KeptStreamRows(s, time.Hour, ServerStreamRows); got != 3602 {
		t.Fatalf("-n 1G under a 1 h limit: %d stream rows, want 3602", got)
	}
}

// A runner with a cap keeps its rows within it over a long test at a
// short -i, while every row still goes to onInterval as it is cut, and
// the kept rows still add up to the stream's total.
func TestRunnerKeepsRowsWithinItsCap(t *testing.T) {
	s := spec.Default()
	s.Duration, s.Interval, s.Omit = 10*time.Minute, 10*time.Millisecond, time.Second
	f := newClockFlow(1, true, 1, s.Duration)
	var end result.End
	seen := 0
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{})
		r := New(s, []Flow{f}, nil, func(result.Interval) { seen++ })
		r.MaxStreamRows = 64
		r.Start()
		f.waitDone()
		end = r.Finish(result.RoleServer)
	})
	if seen < 59_000 {
		t.Fatalf("onInterval saw %d rows, want every one of about 60,000", seen)
	}
	if len(end.Intervals) > 64 || end.RowsJoined < 1024 {
		t.Fatalf("%d rows kept, joined %d at a time: want at most 64, each of about %d intervals", len(end.Intervals), end.RowsJoined, 60_000/64)
	}
	var measured int64
	for _, iv := range end.Intervals {
		if !iv.Omitted {
			measured += iv.Streams[0].Bytes
		}
	}
	if total := end.Streams[0].Bytes; measured != total || total != f.bytesAt(s.Duration)-f.bytesAt(s.Omit) {
		t.Fatalf("the kept rows add up to %d bytes, the stream's total is %d, want %d", measured, total, f.bytesAt(s.Duration)-f.bytesAt(s.Omit))
	}
}
