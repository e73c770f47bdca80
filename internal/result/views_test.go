package result

import (
	"math"
	"testing"
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
