package daemon

import (
	"net"
	"net/http"
	"testing"
	"time"
)

func TestShedFirst(t *testing.T) {
	t0 := time.Unix(1000, 0)
	idleOld := connInfo{phaseIdle, t0}
	newOld := connInfo{phaseNew, t0.Add(time.Second)}
	newYoung := connInfo{phaseNew, t0.Add(2 * time.Second)}
	activeOld := connInfo{phaseActive, t0.Add(-time.Hour)}
	for _, c := range []struct {
		a, b connInfo
		want bool
	}{
		{idleOld, newOld, true},     // older first
		{newOld, newYoung, true},    // older first
		{newYoung, newOld, false},   // younger later
		{newYoung, activeOld, true}, // nothing asked before a request being answered
		{activeOld, newYoung, false},
		{activeOld, connInfo{phaseActive, t0}, true},
	} {
		if got := shedFirst(c.a, c.b); got != c.want {
			t.Errorf("shedFirst(%+v, %+v) = %v", c.a, c.b, got)
		}
	}
}

// The tracker sheds, at the cap, the connection shedFirst picks, never
// the one just accepted; it forgets closed ones.
func TestConnTrackerSheds(t *testing.T) {
	now := time.Unix(0, 0)
	tr := newConnTracker(2, func() time.Time { return now })
	pipe := func() net.Conn { a, b := net.Pipe(); t.Cleanup(func() { a.Close(); b.Close() }); return a }
	c1, c2, c3 := pipe(), pipe(), pipe()
	tr.ConnState(c1, http.StateNew)
	now = now.Add(time.Second)
	tr.ConnState(c2, http.StateNew)
	tr.ConnState(c1, http.StateActive) // c1 is being answered
	now = now.Add(time.Second)
	tr.ConnState(c3, http.StateNew) // over the cap: c2, silent, goes
	if n := tr.counts(); n.Open != 2 || n.Shed != 1 || n.Accepted != 3 || n.Peak != 2 {
		t.Fatalf("%+v; want 2 open, 1 shed, 3 accepted, peak 2", n)
	}
	if _, err := c2.Write([]byte("x")); err == nil {
		t.Fatal("the silent connection is still open")
	}
	tr.ConnState(c1, http.StateClosed)
	if n := tr.counts(); n.Open != 1 {
		t.Fatalf("open %d after a close", n.Open)
	}
}
