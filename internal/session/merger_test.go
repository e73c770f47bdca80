package session

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// rowRecorder is an Observer that keeps the rows it is shown.
type rowRecorder struct{ rows []result.IntervalRow }

func (r *rowRecorder) Started(*result.Result) {}
func (r *rowRecorder) Interval(_ *result.Result, row result.IntervalRow) {
	r.rows = append(r.rows, row)
}

// mergerRig drives a merger's loop with the test's intervals, ticks and
// clock. Every step waits (synctest.Wait) until the loop has dealt with
// it and blocks again, so the rows it shows are exactly those of the
// steps so far.
type mergerRig struct {
	m             *merger
	obs           *rowRecorder
	local, remote chan result.Interval
	ticks         chan time.Time
	at            time.Time // the merger's clock
	done          chan struct{}
}

const rigGrace = time.Second

var rigStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newMergerRig() *mergerRig {
	g := &mergerRig{obs: &rowRecorder{}, local: make(chan result.Interval), remote: make(chan result.Interval, 8),
		ticks: make(chan time.Time), at: rigStart, done: make(chan struct{})}
	g.m = newMerger(&result.Result{}, map[int]string{1: result.RoleClient}, g.obs, rigGrace, func() time.Time { return g.at })
	go func() {
		g.m.loop(g.local, g.remote, g.ticks)
		close(g.done)
	}()
	return g
}

func clientIv(i int) result.Interval {
	return result.Interval{Index: i, Start: float64(i), End: float64(i + 1), Streams: []result.StreamInterval{{ID: 1, Sender: true, Bytes: 100}}}
}

func serverIv(i int) result.Interval {
	return result.Interval{Index: i, Start: float64(i), End: float64(i + 1), Streams: []result.StreamInterval{{ID: 1, Bytes: 90}}}
}

func (g *mergerRig) sendLocal(iv result.Interval)  { g.local <- iv; synctest.Wait() }
func (g *mergerRig) sendRemote(iv result.Interval) { g.remote <- iv; synctest.Wait() }

// tick moves the merger's clock to at and ticks.
func (g *mergerRig) tick(at time.Time) {
	synctest.Wait()
	g.at = at
	g.ticks <- at
	synctest.Wait()
}

func (g *mergerRig) stop() {
	close(g.local)
	<-g.done
}

// shown checks the rows shown so far: their indices, and for each
// whether the server's figures (the received side) were in.
func (g *mergerRig) shown(t *testing.T, want ...row) {
	t.Helper()
	if len(g.obs.rows) != len(want) {
		t.Fatalf("%d rows shown, want %d: %+v", len(g.obs.rows), len(want), g.obs.rows)
	}
	for i, w := range want {
		r := g.obs.rows[i]
		if r.Index != w.index || len(r.Flows) != 1 || r.Flows[0].Sent == nil || (r.Flows[0].Received != nil) != w.withServer {
			t.Fatalf("row %d: %+v, want index %d, server's figures %v", i, r, w.index, w.withServer)
		}
	}
}

type row struct {
	index      int
	withServer bool
}

// A row shows once both ends' figures are in, not before, whichever
// comes first.
func TestMergerShowsARowWhenBothEndsAreIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newMergerRig()
		g.sendLocal(clientIv(0))
		g.shown(t)
		g.sendRemote(serverIv(0))
		g.shown(t, row{0, true})
		g.sendRemote(serverIv(1))
		g.shown(t, row{0, true})
		g.sendLocal(clientIv(1))
		g.shown(t, row{0, true}, row{1, true})
		g.stop()
		if len(g.m.local) != 2 || len(g.m.remote) != 2 {
			t.Fatalf("kept %d local and %d remote intervals, want 2 and 2", len(g.m.local), len(g.m.remote))
		}
	})
}

// Rows show in order: a later row complete waits for an earlier one.
func TestMergerShowsRowsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newMergerRig()
		g.sendLocal(clientIv(0))
		g.sendLocal(clientIv(1))
		g.sendRemote(serverIv(1))
		g.shown(t)
		g.sendRemote(serverIv(0))
		g.shown(t, row{0, true}, row{1, true})
		g.stop()
	})
}

// The server's figures are overdue exactly grace after the client's
// arrived, on the merger's clock: a tick a nanosecond before shows
// nothing, a tick at grace shows the row without them, and their late
// arrival shows nothing again but is kept for the final result.
func TestMergerShowsAnOverdueRowAtItsGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newMergerRig()
		arrived := rigStart.Add(3 * time.Second)
		g.at = arrived
		g.sendLocal(clientIv(0))
		g.tick(arrived.Add(rigGrace - time.Nanosecond))
		g.shown(t)
		g.tick(arrived.Add(rigGrace))
		g.shown(t, row{0, false})
		g.sendRemote(serverIv(0))
		g.tick(arrived.Add(10 * rigGrace))
		g.shown(t, row{0, false})
		g.stop()
		if len(g.m.remote) != 1 || g.m.remote[0].Index != 0 {
			t.Fatalf("the late server interval was not kept: %+v", g.m.remote)
		}
	})
}

// A server row with no client row is never overdue: the merger waits
// for the client's; ticks alone show nothing.
func TestMergerWaitsForTheClientsRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newMergerRig()
		g.sendRemote(serverIv(0))
		g.tick(rigStart.Add(time.Hour))
		g.shown(t)
		g.stop()
	})
}

// At the end, the server intervals already sent are drained without
// waiting for more, and flush shows every row left, with or without the
// server's figures.
func TestMergerFlushShowsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newMergerRig()
		g.sendLocal(clientIv(0))
		g.sendLocal(clientIv(1))
		g.sendLocal(clientIv(2))
		g.sendRemote(serverIv(0))
		g.stop()
		g.shown(t, row{0, true})
		sent := make(chan result.Interval, 1)
		sent <- serverIv(1)
		g.m.drain(sent) // returns with the feed empty, not closed
		g.m.flush()
		g.shown(t, row{0, true}, row{1, true}, row{2, false})
	})
}
