package flowrun

import (
	"testing"
	"time"
)

func TestQuietWatchMeasuresTheTimeSinceTheCountMoved(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var q quietWatch
	steps := []struct {
		at    time.Duration
		bytes int64
		want  time.Duration
	}{
		{0, 100, 0}, // first look
		{10 * time.Millisecond, 100, 10 * time.Millisecond},
		{30 * time.Millisecond, 250, 0}, // moved: the quiet restarts
		{130 * time.Millisecond, 250, 100 * time.Millisecond},
		{131 * time.Millisecond, 251, 0},
	}
	for _, s := range steps {
		if got := q.observe(t0.Add(s.at), s.bytes); got != s.want {
			t.Fatalf("at %v with %d bytes: quiet %v, want %v", s.at, s.bytes, got, s.want)
		}
	}
}

// stubFlow is a receiving or sending flow whose count the test sets.
type stubFlow struct {
	Flow
	id     int
	sender bool
	bytes  int64
	done   chan struct{}
}

func (f *stubFlow) ID() int               { return f.id }
func (f *stubFlow) Sender() bool          { return f.sender }
func (f *stubFlow) Bytes() int64          { return f.bytes }
func (f *stubFlow) Done() <-chan struct{} { return f.done }

func TestDrainDoneWhenEveryReceiverIsQuietOrFinished(t *testing.T) {
	t0 := time.Unix(1000, 0)
	quiet := 200 * time.Millisecond
	recvA := &stubFlow{id: 1, done: make(chan struct{})}
	recvB := &stubFlow{id: 2, done: make(chan struct{})}
	sender := &stubFlow{id: 3, sender: true, bytes: 1, done: make(chan struct{})}
	flows := []Flow{recvA, recvB, sender}
	w := map[int]*quietWatch{}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if drainDone(at(0), flows, w, quiet) {
		t.Fatal("done at the first look")
	}
	recvA.bytes = 10 // A still arriving, B quiet
	if drainDone(at(150*time.Millisecond), flows, w, quiet) {
		t.Fatal("done while A's count moves")
	}
	if drainDone(at(250*time.Millisecond), flows, w, quiet) {
		t.Fatal("done 100 ms after A's last byte")
	}
	sender.bytes = 99 // a sender's count is not a receiver's
	if !drainDone(at(350*time.Millisecond), flows, w, quiet) {
		t.Fatal("not done with both receivers quiet for 200 ms")
	}
	// A finished receiver (its peer closed) needs no quiet.
	w = map[int]*quietWatch{}
	close(recvA.done)
	recvB.bytes = 5
	drainDone(at(0), flows, w, quiet)
	if !drainDone(at(quiet), flows, w, quiet) {
		t.Fatal("a finished receiver held the drain")
	}
}
