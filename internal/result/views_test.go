package result

import (
	"math"
	"testing"
	"time"
)

// a -R --bidir-like result: stream 1 client→server, stream 2 server→client.
func twoWay() *Result {
	return &Result{
		Local: End{Role: RoleClient, Streams: []Stream{
			{ID: 1, Sender: true, Start: 0, End: 2, Bytes: 1000, Retransmits: 3},
			{ID: 2, Sender: false, Start: 0, End: 2.5, Bytes: 700},
		}, Intervals: []Interval{
			{Index: 0, Start: 0, End: 1, Streams: []StreamInterval{{ID: 1, Sender: true, Bytes: 600}, {ID: 2, Bytes: 300}}},
			{Index: 1, Start: 1, End: 2, Streams: []StreamInterval{{ID: 1, Sender: true, Bytes: 400}, {ID: 2, Bytes: 400}}},
		}},
		Remote: End{Role: RoleServer, Streams: []Stream{
			{ID: 1, Sender: false, Start: 0, End: 2.1, Bytes: 1000},
			{ID: 2, Sender: true, Start: 0, End: 2, Bytes: 700, Retransmits: 1},
		}, Intervals: []Interval{
			{Index: 0, Start: 0, End: 1.01, Streams: []StreamInterval{{ID: 1, Bytes: 590}, {ID: 2, Sender: true, Bytes: 310}}},
			{Index: 2, Start: 2, End: 2.1, Streams: []StreamInterval{{ID: 1, Bytes: 10}}},
		}},
	}
}

func TestFlowsPairBothEnds(t *testing.T) {
	flows := twoWay().Flows()
	if len(flows) != 2 {
		t.Fatalf("%d flows", len(flows))
	}
	tests := []struct {
		id        int
		role      string
		sent, got int64
	}{
		{1, RoleClient, 1000, 1000},
		{2, RoleServer, 700, 700},
	}
	for i, tc := range tests {
		f := flows[i]
		if f.ID != tc.id || f.SenderRole != tc.role || f.Sent.Bytes != tc.sent || f.Received.Bytes != tc.got {
			t.Errorf("flow %d = %+v", i, f)
		}
	}
}

func TestDirectionsSum(t *testing.T) {
	dirs := twoWay().Directions()
	if len(dirs) != 2 || dirs[0].SenderRole != RoleClient || dirs[1].SenderRole != RoleServer {
		t.Fatalf("directions %+v", dirs)
	}
	d := dirs[0]
	if d.Sent.Bytes != 1000 || d.Sent.Retransmits != 3 || d.Received.Bytes != 1000 || d.Received.Seconds != 2.1 {
		t.Errorf("client→server sums %+v / %+v", d.Sent, d.Received)
	}
	if got := d.Received.BitsPerSecond(); math.Abs(got-8000/2.1) > 1e-9 {
		t.Errorf("rate %v", got)
	}
	if d.Label() != "client→server" || dirs[1].Label() != "server→client" {
		t.Errorf("labels %q %q", d.Label(), dirs[1].Label())
	}
}

func TestIntervalRowsJoinByIndex(t *testing.T) {
	rows := twoWay().IntervalRows()
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (0 and 1 local, 2 remote only)", len(rows))
	}
	r0 := rows[0]
	if r0.End != 1 { // the local end's times win
		t.Errorf("row 0 ends at %v, want the local 1", r0.End)
	}
	if s := r0.SumDirection(RoleClient); s.SentBytes != 600 || s.ReceivedBytes != 590 {
		t.Errorf("row 0 client→server %+v", s)
	}
	if s := r0.SumDirection(RoleServer); s.SentBytes != 310 || s.ReceivedBytes != 300 {
		t.Errorf("row 0 server→client %+v", s)
	}
	if s := rows[1].SumDirection(RoleClient); !s.HasSent || s.HasReceived {
		t.Errorf("row 1 has only the local side: %+v", s)
	}
	if rows[2].Index != 2 || rows[2].End != 2.1 {
		t.Errorf("row 2 = %+v", rows[2])
	}
}

func TestRateOfEmptySpan(t *testing.T) {
	if Rate(100, 0) != 0 || Rate(100, -1) != 0 {
		t.Error("an empty span must have rate 0")
	}
	if (UDP{}).LostPercent() != 0 || (UDP{Lost: 1, Expected: 4}).LostPercent() != 25 {
		t.Error("LostPercent")
	}
}

// A short tail joined to the row before it: the bytes add up, the spans
// run from the row's start to the tail's end.
func TestIntervalRowJoinShortTail(t *testing.T) {
	row := IntervalRow{Index: 5, Start: 5, End: 6, Flows: []FlowInterval{{ID: 1, SenderRole: RoleClient,
		Sent: &StreamInterval{ID: 1, Sender: true, Bytes: 100, Calls: 4}, SentSpan: Span{Start: 5, End: 6}}}}
	tail := IntervalRow{Index: 6, Start: 6, End: 6.02, Tail: true, Flows: []FlowInterval{{ID: 1, SenderRole: RoleClient,
		Sent: &StreamInterval{ID: 1, Sender: true, Bytes: 30, Calls: 1}, SentSpan: Span{Start: 6, End: 6.02, Tail: true}}}}
	if !tail.ShortTail(time.Second) || tail.ShortTail(100*time.Millisecond) || row.ShortTail(time.Second) || tail.ShortTail(0) {
		t.Error("ShortTail: a 20 ms tail is short at -i 1 and not at -i 0.1; a row that is not a tail never is")
	}
	j := row.Join(tail)
	f := j.Flows[0]
	if f.Sent.Bytes != 130 || f.Sent.Calls != 5 || f.SentSpan != (Span{Start: 5, End: 6.02, Tail: true}) || j.End != 6.02 || !j.Tail || j.Start != 5 {
		t.Errorf("joined row %+v, sent %+v", j, *f.Sent)
	}
	if row.Flows[0].Sent.Bytes != 100 || tail.Flows[0].Sent.Bytes != 30 {
		t.Error("Join changed its rows")
	}
}
