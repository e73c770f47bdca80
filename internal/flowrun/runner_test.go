package flowrun

import (
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// clockFlow is a flow whose bytes are a function of the (synctest) clock:
// it moves bytesPerMs from the epoch until stopAt, its last byte.
type clockFlow struct {
	id         int
	sender     bool
	bytesPerMs int64
	stopAt     time.Duration
	linger     time.Duration // how long after its last byte the flow is done (a receiver waiting out its drain)
	firstAt    time.Duration // a receiver's first byte; 0: at once
	epoch      time.Time
	started    atomic.Bool
	done       chan struct{}
}

func newClockFlow(id int, sender bool, bytesPerMs int64, stopAt time.Duration) *clockFlow {
	return &clockFlow{id: id, sender: sender, bytesPerMs: bytesPerMs, stopAt: stopAt}
}

func (f *clockFlow) elapsed() time.Duration {
	if !f.started.Load() {
		return 0
	}
	return min(time.Since(f.epoch), f.stopAt)
}

func (f *clockFlow) FirstByte() time.Duration {
	if f.sender || !f.started.Load() {
		return 0
	}
	return max(f.firstAt, time.Nanosecond)
}

func (f *clockFlow) ID() int      { return f.id }
func (f *clockFlow) Sender() bool { return f.sender }
func (f *clockFlow) Start(b Begin) {
	f.epoch = b.Epoch
	f.started.Store(true)
	go func() {
		time.Sleep(f.stopAt + f.linger) // synctest: fake time (clockFlow runs in synctest bubbles only)
		close(f.done)
	}()
}
func (f *clockFlow) Stop(time.Time)                      {}
func (f *clockFlow) Abort()                              {}
func (f *clockFlow) Done() <-chan struct{}               { return f.done }
func (f *clockFlow) Bytes() int64                        { return f.bytesPerMs * f.elapsed().Milliseconds() }
func (f *clockFlow) LastByte() time.Duration             { return f.elapsed() }
func (f *clockFlow) Err() error                          { return nil }
func (f *clockFlow) Addrs() (string, string)             { return "a", "b" }
func (f *clockFlow) Close() error                        { return nil }
func (f *clockFlow) Sample(*result.StreamInterval, bool) {}
func (f *clockFlow) MarkOmitEnd()                        {}
func (f *clockFlow) Total(*result.Stream)                {}
func (f *clockFlow) bytesAt(d time.Duration) int64 {
	return f.bytesPerMs * min(d, f.stopAt).Milliseconds()
}
func (f *clockFlow) waitDone()     { <-f.done }
func (f *clockFlow) rate() float64 { return float64(f.bytesPerMs) * 8e3 }

// runClock runs one flow under a runner with spec s on the synctest
// clock, until the flow's last byte, and returns the end's view.
func runClock(t *testing.T, s spec.Spec, f *clockFlow) result.End {
	t.Helper()
	var end result.End
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{}) // a channel of the bubble
		r := New(s, []Flow{f}, nil, nil)
		r.Start()
		f.waitDone()
		end = r.Finish(result.RoleClient)
	})
	return end
}

func TestRunnerCutsWholeIntervals(t *testing.T) {
	s := spec.Default()
	s.Duration = 2 * time.Second
	for _, tc := range []struct {
		name   string
		sender bool
		last   time.Duration // the flow's last byte
		rows   int           // intervals reported, the tail among them
		tail   bool          // the last row is the tail
	}{
		// A sender's last write lands just after the final boundary:
		// nothing moved after it (the flow counts whole milliseconds),
		// so there is no tail; a millisecond later there is one.
		{"sender sliver", true, 2*time.Second + 20*time.Microsecond, 2, false},
		{"sender's last ms", true, 2*time.Second + time.Millisecond, 3, true},
		// A receiver's drain after the sender stopped is the tail, short or long.
		{"short drain", false, 2*time.Second + 90*time.Millisecond, 3, true},
		{"long drain", false, 2*time.Second + 300*time.Millisecond, 3, true},
		{"stops at the boundary", true, 2 * time.Second, 2, false},
		// A test shorter than one interval has its tail as its one row.
		{"shorter than an interval", true, 50 * time.Millisecond, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newClockFlow(1, tc.sender, 1000, tc.last)
			end := runClock(t, s, f)
			if len(end.Intervals) != tc.rows {
				t.Fatalf("%d intervals %+v, want %d", len(end.Intervals), end.Intervals, tc.rows)
			}
			var sum int64
			for _, iv := range end.Intervals {
				sum += iv.Streams[0].Bytes
				// Only the tail may be shorter than a full row.
				if !iv.Tail && iv.Seconds() < s.Interval.Seconds()*0.99 {
					t.Errorf("interval %.6f-%.6f is shorter than -i but not the tail", iv.Start, iv.End)
				}
				if r := result.Rate(iv.Streams[0].Bytes, iv.Seconds()); r > 1.01*f.rate() {
					t.Errorf("interval %.6f-%.6f reads %.0f bit/s, the flow moved %.0f", iv.Start, iv.End, r, f.rate())
				}
			}
			total := end.Streams[0].Bytes
			if total != f.bytesAt(tc.last) {
				t.Errorf("total %d bytes, want %d", total, f.bytesAt(tc.last))
			}
			// The rows, the tail among them, add up to the totals.
			if sum != total {
				t.Errorf("rows sum to %d bytes, total %d", sum, total)
			}
			last := end.Intervals[len(end.Intervals)-1]
			if last.Tail != tc.tail {
				t.Errorf("last row %+v: tail %v, want %v", last, last.Tail, tc.tail)
			}
			// No row spans time after the last byte.
			if last.End > tc.last.Seconds()+1e-9 && tc.tail {
				t.Errorf("tail ends at %v s, after the last byte at %v", last.End, tc.last.Seconds())
			}
			if got := end.Streams[0].End; math.Abs(got-tc.last.Seconds()) > 1e-9 {
				t.Errorf("stream ends at %v s, want its last byte %v", got, tc.last.Seconds())
			}
		})
	}
}

func TestRunnerOmitsTheStart(t *testing.T) {
	// -t 2 -O 1: three seconds run, the first is left out of the totals.
	s := spec.Default()
	s.Omit = time.Second
	s.Duration = 3 * time.Second
	f := newClockFlow(1, true, 1000, s.Duration+10*time.Microsecond)
	end := runClock(t, s, f)
	if len(end.Intervals) != 3 {
		t.Fatalf("%d intervals, want 3 (one omitted, two counted)", len(end.Intervals))
	}
	for i, iv := range end.Intervals {
		if iv.Omitted != (i == 0) {
			t.Errorf("interval %d omitted=%v", i, iv.Omitted)
		}
		if iv.Index != i {
			t.Errorf("interval %d has index %d", i, iv.Index)
		}
		if iv.Start != float64(i) || iv.End != float64(i+1) {
			t.Errorf("interval %d spans %v-%v", i, iv.Start, iv.End)
		}
	}
	st := end.Streams[0]
	if st.Start != 1 {
		t.Errorf("totals start at %v s, want 1 (after the omitted start)", st.Start)
	}
	if want := f.bytesAt(f.stopAt) - f.bytesAt(s.Omit); st.Bytes != want {
		t.Errorf("total %d bytes, want %d (the omitted second left out)", st.Bytes, want)
	}
}

func TestRunnerOmitBoundaryBetweenTicks(t *testing.T) {
	// -O 1.5 -i 1: a forced cut at the end of the omitted start, so that no
	// row straddles it; counted rows then run from there.
	s := spec.Default()
	s.Omit = 1500 * time.Millisecond
	s.Duration = 3500 * time.Millisecond
	f := newClockFlow(1, true, 1000, s.Duration)
	end := runClock(t, s, f)
	want := [][2]float64{{0, 1}, {1, 1.5}, {1.5, 2.5}, {2.5, 3.5}}
	if len(end.Intervals) != len(want) {
		t.Fatalf("%d intervals, want %d", len(end.Intervals), len(want))
	}
	for i, iv := range end.Intervals {
		if iv.Start != want[i][0] || iv.End != want[i][1] {
			t.Errorf("interval %d spans %v-%v, want %v", i, iv.Start, iv.End, want[i])
		}
		if iv.Omitted != (iv.End <= 1.5) {
			t.Errorf("interval %d omitted=%v", i, iv.Omitted)
		}
	}
}

// TestRunnerReceiverSpan: a receiver's span runs from its first byte to
// its last, so that on a long path neither the round trip before the
// peer's first byte (-R) nor a wait after its last byte is counted; and
// the receiver says how long it drained after the sender stopped.
func TestRunnerReceiverSpan(t *testing.T) {
	s := spec.Default()
	s.Duration = 2 * time.Second
	f := newClockFlow(1, false, 1000, 2300*time.Millisecond)
	f.firstAt = 215 * time.Millisecond
	var end result.End
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{})
		r := New(s, []Flow{f}, nil, nil)
		r.Start()
		time.Sleep(2100 * time.Millisecond) // synctest: fake time; the peer's SenderDone arrives
		r.DrainReceivers(time.Second)
		f.waitDone()
		time.Sleep(240 * time.Millisecond) // synctest: fake time; the end-of-test exchange
		end = r.Finish(result.RoleServer)
	})
	st := end.Streams[0]
	if st.Start != 0.215 || st.End != 2.3 {
		t.Errorf("receiver span %v-%v s, want 0.215-2.3 (first byte to last)", st.Start, st.End)
	}
	if math.Abs(st.Drain-0.2) > 1e-9 {
		t.Errorf("drain %v s, want 0.2", st.Drain)
	}
}

// TestRunnerSharesTimelineAndBudget: Start gives every flow the same -n
// budget, and each stream that keeps a TCP_INFO timeline its share of the
// samples the end's report has room for.
func TestRunnerSharesTimelineAndBudget(t *testing.T) {
	s := spec.Default()
	s.Duration, s.Bytes = 0, 3<<20
	var senders, receivers []Flow
	for id := 1; id <= 3; id++ {
		a, b := loopback.TCPPair(t)
		senders = append(senders, NewTCPFlow(tcpflow.NewStream(id, true, a), 64<<10, 100*time.Millisecond))
		receivers = append(receivers, NewTCPFlow(tcpflow.NewStream(id, false, b), 64<<10, 100*time.Millisecond))
	}
	rx := New(s, receivers, nil, nil)
	tx := New(s, senders, nil, nil)
	rx.Start()
	tx.Start()
	<-tx.Done()
	<-rx.Done()
	sent := tx.Finish(result.RoleClient)
	got := rx.Finish(result.RoleServer)
	var total int64
	for i, f := range senders {
		if share := f.(*TCPFlow).share; share != maxTimelineSamples/3 {
			t.Errorf("sender %d: timeline share %d, want %d", i+1, share, maxTimelineSamples/3)
		}
		total += sent.Streams[i].Bytes
	}
	if total != s.Bytes {
		t.Errorf("the streams sent %d bytes together, -n %d", total, s.Bytes)
	}
	for i := range receivers {
		if got.Streams[i].Bytes != sent.Streams[i].Bytes {
			t.Errorf("stream %d: received %d of %d", i+1, got.Streams[i].Bytes, sent.Streams[i].Bytes)
		}
	}
}

// With host counters asked for, the end samples its host as it cuts each
// interval, and once more at its end unless that is the last cut.
func TestRunnerSamplesTheHostPerInterval(t *testing.T) {
	if _, err := hostmon.ReadCPUStat(); err != nil {
		t.Skipf("no CPU counters here: %v", err)
	}
	s := spec.Default()
	s.Duration = 3 * time.Second
	s.HostCounters = true
	for _, tc := range []struct {
		name  string
		last  time.Duration
		times []float64
	}{
		{"ends on a boundary", 3 * time.Second, []float64{1, 2, 3}},
		{"a drain past the last boundary", 3*time.Second + 400*time.Millisecond, []float64{1, 2, 3, 3.4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end := runClock(t, s, newClockFlow(1, false, 1000, tc.last))
			hc := end.HostCounters
			if hc == nil || len(hc.Samples) != len(tc.times) {
				t.Fatalf("host samples %+v, want at %v s", hc, tc.times)
			}
			for i, smp := range hc.Samples {
				if math.Abs(smp.T-tc.times[i]) > 1e-6 {
					t.Errorf("sample %d at %v s, want %v", i, smp.T, tc.times[i])
				}
				for _, v := range []float64{smp.User, smp.System, smp.SoftIRQ} {
					if v < 0 || v > 100 || math.IsNaN(v) {
						t.Errorf("sample %d: %+v: a share outside 0-100%%", i, smp)
					}
				}
			}
		})
	}
	s.HostCounters = false
	if end := runClock(t, s, newClockFlow(1, false, 1000, time.Second)); end.HostCounters != nil {
		t.Errorf("host counters without being asked: %+v", end.HostCounters)
	}
}

// TestRunnerCutsNoRowAfterTheData: a receiver whose data stops at 2.05 s
// (the peer's senders stopped at 2.0 s) waits out its drain until 3.5 s.
// No full row is cut at 3.0 s over time in which nothing arrived: the
// bytes after 2.0 s are the tail, which ends at the last byte.
func TestRunnerCutsNoRowAfterTheData(t *testing.T) {
	s := spec.Default()
	s.Duration = 2 * time.Second
	f := newClockFlow(1, false, 1000, 2*time.Second+50*time.Millisecond)
	f.linger = 1450 * time.Millisecond
	var end result.End
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{})
		r := New(s, []Flow{f}, nil, nil)
		r.Start()
		time.Sleep(2 * time.Second)       // synctest: fake time; the test's 2 s
		r.DrainReceivers(2 * time.Second) // the peer said its senders stopped
		f.waitDone()
		end = r.Finish(result.RoleServer)
	})
	var spans [][2]float64
	for _, iv := range end.Intervals {
		spans = append(spans, [2]float64{iv.Start, iv.End})
	}
	if len(end.Intervals) != 3 {
		t.Fatalf("rows %v, want 0-1, 1-2 and the tail 2-2.05", spans)
	}
	tail := end.Intervals[2]
	if !tail.Tail || math.Abs(tail.End-2.05) > 1e-9 || tail.Streams[0].Bytes != 50*1000 {
		t.Errorf("tail %+v, want 2.0-2.05 s holding 50,000 bytes", tail)
	}
}

// A row's calls and the total's come from one counter: the rows add up to
// the total (-e's Write column), for the sender and for the receiver.
func TestRunnerRowCallsAddUpToTheTotal(t *testing.T) {
	s := spec.Default()
	s.Duration, s.Bytes, s.Interval = 0, 64<<20, 5*time.Millisecond
	a, b := loopback.TCPPair(t)
	tx := New(s, []Flow{NewTCPFlow(tcpflow.NewStream(1, true, a), 64<<10, 0)}, nil, nil)
	rx := New(s, []Flow{NewTCPFlow(tcpflow.NewStream(1, false, b), 64<<10, 0)}, nil, nil)
	rx.Start()
	tx.Start()
	<-tx.Done()
	<-rx.Done()
	for _, end := range []result.End{tx.Finish(result.RoleClient), rx.Finish(result.RoleServer)} {
		var rows int64
		for _, iv := range end.Intervals {
			for _, si := range iv.Streams {
				rows += si.Calls
			}
		}
		t.Logf("%s: %d rows, %d calls", end.Role, len(end.Intervals), rows)
		if total := end.Streams[0].Calls; rows != total || total == 0 {
			t.Errorf("%s: %d rows' calls add up to %d, the total says %d", end.Role, len(end.Intervals), rows, total)
		}
	}
}

// gatedSink is a receiver's -F file that holds the reader inside its
// first write until the test opens it, so that the kernel takes in the
// rest of the test's bytes while the reader is held.
type gatedSink struct {
	entered chan struct{}
	open    chan struct{}
	writes  int
}

func (g *gatedSink) Read([]byte) (int, error) { return 0, nil }
func (g *gatedSink) Write(p []byte) (int, error) {
	if g.writes++; g.writes == 1 {
		close(g.entered)
		<-g.open
	}
	return len(p), nil
}

// The race TestRunnerRowCallsAddUpToTheTotal caught once under -race,
// made to happen every time: the receiver's last row is cut when the
// kernel has counted every byte but the reader has taken in only one
// block; its other reads come after that cut, with no byte the kernel had
// not already counted. Those reads must land in a row (the tail), or the
// rows add up to fewer calls than the total.
func TestRunnerReadsAfterTheLastCutAreInARow(t *testing.T) {
	const total, block = 64 << 10, 8 << 10
	s := spec.Default()
	s.Duration, s.Bytes, s.Interval = 0, total, time.Hour // the test cuts the row itself
	a, b := loopback.TCPPair(t)
	sink := &gatedSink{entered: make(chan struct{}), open: make(chan struct{})}
	rxStream := tcpflow.NewStream(1, false, b)
	rxStream.UseFile(sink)
	rxFlow := NewTCPFlow(rxStream, block, 0)
	tx := New(s, []Flow{NewTCPFlow(tcpflow.NewStream(1, true, a), block, 0)}, nil, nil)
	rx := New(s, []Flow{rxFlow}, nil, nil)
	rx.Start()
	stopTickNow(rx) // the test cuts the receiver's row itself
	tx.Start()
	<-tx.Done()
	<-sink.entered
	// The kernel has the sender's bytes once they are all in flight on
	// loopback; wait for its count, bounded.
	for deadline := time.Now().Add(10 * time.Second); rxFlow.Bytes() < total; {
		if time.Now().After(deadline) {
			close(sink.open)
			t.Fatalf("the receiver's kernel counted %d of %d bytes in 10 s", rxFlow.Bytes(), total)
		}
		time.Sleep(time.Millisecond) // bounded poll: the kernel's count has no event to wait on
	}
	rx.cut(time.Since(rx.epoch), false)
	close(sink.open)
	<-rx.Done()
	tx.Finish(result.RoleClient)
	end := rx.Finish(result.RoleServer)
	var calls, bytes int64
	for _, iv := range end.Intervals {
		for _, si := range iv.Streams {
			calls += si.Calls
			bytes += si.Bytes
		}
	}
	st := end.Streams[0]
	if st.Calls < 2 || calls != st.Calls || bytes != st.Bytes {
		t.Errorf("%d rows add up to %d calls and %d bytes; the total says %d calls and %d bytes", len(end.Intervals), calls, bytes, st.Calls, st.Bytes)
	}
}

// A loaded machine can run Finish before the interval goroutine wakes for
// the last boundary the data passed (TestOmitAsIperf3 once saw its one
// counted second reported as the tail). The test stops the tick before
// any timer fires, as a starved goroutine would: the second is still a
// row of its own, not the tail.
func TestRunnerCutsABoundaryTheTickMissed(t *testing.T) {
	s := spec.Default()
	s.Duration, s.Interval = time.Second, time.Second
	f := newClockFlow(1, true, 1000, time.Second)
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{})
		r := New(s, []Flow{f}, nil, nil)
		r.Start()
		stopTickNow(r) // the tick never wakes
		f.waitDone()
		end := r.Finish(result.RoleClient)
		if len(end.Intervals) != 1 {
			t.Fatalf("%d rows %+v, want 1", len(end.Intervals), end.Intervals)
		}
		iv := end.Intervals[0]
		if iv.Tail || iv.Start != 0 || iv.End != 1 || iv.Streams[0].Bytes != f.bytesAt(time.Second) {
			t.Errorf("row %+v: want 0-1 s, not the tail, with %d bytes", iv, f.bytesAt(time.Second))
		}
	})
}

// stopTickNow stops a started runner's interval goroutine, as a starved
// one that never wakes again, so that the test cuts rows itself; Finish
// then finds it stopped.
func stopTickNow(r *Runner) {
	close(r.stopTick)
	<-r.tickDone
	r.stopTick, r.tickDone = make(chan struct{}), make(chan struct{})
	close(r.tickDone)
}

// The omitted start's end read late (the interval goroutine woke 250 ms
// after it, as TestOmitAsIperf3 once saw on a loaded machine): the totals
// count their bytes from that reading, so their span starts there too,
// not at -O, which would read the rate low by the late share.
func TestRunnerTotalsCountFromALateOmitCut(t *testing.T) {
	s := spec.Default()
	s.Duration, s.Interval, s.Omit = 2*time.Second, time.Second, time.Second
	f := newClockFlow(1, true, 1000, 3*time.Second)
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{})
		r := New(s, []Flow{f}, nil, nil)
		r.Start()
		stopTickNow(r)
		time.Sleep(1250 * time.Millisecond) // synctest: the late wake
		r.cut(time.Second, false)
		f.waitDone()
		end := r.Finish(result.RoleClient)
		st := end.Streams[0]
		if st.Start != 1.25 || st.Bytes != f.bytesAt(3*time.Second)-f.bytesAt(1250*time.Millisecond) {
			t.Errorf("total %d bytes from %.3f s; want %d from 1.250 s, where its bytes begin",
				st.Bytes, st.Start, f.bytesAt(3*time.Second)-f.bytesAt(1250*time.Millisecond))
		}
		if r := result.Rate(st.Bytes, st.End-st.Start); math.Abs(r-f.rate()) > 1e-6*f.rate() {
			t.Errorf("total reads %.0f bit/s, the flow moved %.0f", r, f.rate())
		}
	})
}
