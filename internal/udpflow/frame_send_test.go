package udpflow

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"
)

// fakeClock is a frameClock whose time moves only when the sender waits
// for a later time, or when a test's stall moves it.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Until(t time.Time, stop <-chan struct{}) bool {
	select {
	case <-stop:
		return false
	default:
	}
	if t.After(c.now) {
		c.now = t
	}
	return true
}

type sentDatagram struct {
	at    time.Time
	seq   uint64
	frame Frame
}

// runFakeFrames runs a frameSender on a fake clock until frame number
// frames is due (so frames frames go); stall, when set, is called before
// each send call.
func runFakeFrames(t *testing.T, f isoch.Frames, size, batch, frames int, stall func(c *fakeClock, d []sentDatagram)) ([]sentDatagram, *frameCounts, time.Time) {
	t.Helper()
	t0 := time.Unix(1_800_000_000, 0)
	clock := &fakeClock{now: t0}
	counts := &frameCounts{}
	var sent []sentDatagram
	var errs atomic.Int64
	end := f.Due(t0, int64(frames))
	fs := &frameSender{
		f: f, size: size, batch: batch, clock: clock, sizer: isoch.NewSizer(f),
		stop: make(chan struct{}), counts: counts, sendErrs: &errs,
		stopping: func() bool { return !clock.now.Before(end) },
		sentNow:  func(int) {},
	}
	fs.send = func(b []byte, n int) (int, error) {
		if stall != nil {
			stall(clock, sent)
		}
		for j := range n {
			d := b[j*size : (j+1)*size]
			h, err := Parse(d)
			if err != nil {
				t.Fatal(err)
			}
			fr, err := ParseFrame(d)
			if err != nil {
				t.Fatal(err)
			}
			sent = append(sent, sentDatagram{at: time.Unix(0, h.SentNs), seq: h.Seq, frame: fr})
		}
		return n, nil
	}
	buf := make([]byte, batch*size)
	for i := range batch {
		(&Header{StreamID: 1}).Put(buf[i*size:])
	}
	if err := fs.run(buf, t0); err != nil {
		t.Fatal(err)
	}
	return sent, counts, t0
}

func TestFrameScheduleOnAFakeClock(t *testing.T) {
	// 50 frames a second of 8,000 bytes (3.2 Mbit/s): 8 datagrams of
	// 1,000 bytes, 1 ms apart.
	f := isoch.Frames{FPS: 50, Mean: 3.2e6, IPG: time.Millisecond, RNGState: 1}
	sent, counts, t0 := runFakeFrames(t, f, 1000, 16, 10, nil)
	if len(sent) != 10*8 {
		t.Fatalf("%d datagrams for 10 frames, want 80", len(sent))
	}
	for i, d := range sent {
		k, j := i/8, i%8
		due := t0.Add(time.Duration(k) * 20 * time.Millisecond)
		want := due.Add(time.Duration(j) * time.Millisecond)
		if d.seq != uint64(i) || d.frame.Number != uint64(k) || d.frame.Index != uint32(j) || d.frame.Count != 8 ||
			d.frame.DueNs != due.UnixNano() || !d.at.Equal(want) {
			t.Fatalf("datagram %d: seq %d, frame %+v at %v; want frame %d index %d of 8 due at %v, sent at %v",
				i, d.seq, d.frame, d.at.Sub(t0), k, j, due.Sub(t0), want.Sub(t0))
		}
	}
	if fr := counts.Frames(); fr.Sent != 10 || fr.Late != 0 || fr.LateMaxMs != 0 {
		t.Errorf("counts %+v: want 10 frames sent, none late", fr)
	}
}

func TestFrameScheduleBackToBack(t *testing.T) {
	// --ipg 0: a frame's datagrams go in send calls of up to batch.
	f := isoch.Frames{FPS: 100, Mean: 8e6, RNGState: 1} // 10,000 bytes: 10 datagrams
	sent, _, t0 := runFakeFrames(t, f, 1000, 4, 3, nil)
	if len(sent) != 30 {
		t.Fatalf("%d datagrams, want 30", len(sent))
	}
	for i, d := range sent {
		if due := t0.Add(time.Duration(i/10) * 10 * time.Millisecond); !d.at.Equal(due) {
			t.Errorf("datagram %d sent at %v, want its frame's due time %v", i, d.at.Sub(t0), due.Sub(t0))
		}
	}
}

func TestLateFrameIsSentLateAndCounted(t *testing.T) {
	// The sender stalls 45 ms in frame 1's send call (at 20 ms): frame 2
	// (due at 40 ms) and frame 3 (due at 60 ms) go at once, at 65 ms,
	// late by 25 and 5 ms, and frame 4 (80 ms) on time. None is dropped.
	f := isoch.Frames{FPS: 50, Mean: 0.8e6, RNGState: 1} // 2,000 bytes: 2 datagrams
	stalled := false
	stall := func(c *fakeClock, d []sentDatagram) {
		if !stalled && len(d) == 2 {
			stalled = true
			c.now = c.now.Add(45 * time.Millisecond)
		}
	}
	sent, counts, t0 := runFakeFrames(t, f, 1000, 8, 6, stall)
	if len(sent) != 12 {
		t.Fatalf("%d datagrams for 6 frames, want 12", len(sent))
	}
	ms := func(d sentDatagram) time.Duration { return d.at.Sub(t0) }
	for _, c := range []struct {
		i    int
		want time.Duration
	}{{2, 20 * time.Millisecond}, {4, 65 * time.Millisecond}, {6, 65 * time.Millisecond}, {8, 80 * time.Millisecond}, {10, 100 * time.Millisecond}} {
		if got := ms(sent[c.i]); got != c.want || sent[c.i].frame.Number != uint64(c.i/2) {
			t.Errorf("datagram %d (frame %d) sent at %v, want %v", c.i, sent[c.i].frame.Number, got, c.want)
		}
	}
	fr := counts.Frames()
	if fr.Late != 2 || fr.LateMaxMs != 25 {
		t.Errorf("counts %+v: want 2 frames late, the latest by 25 ms", fr)
	}
}

// A send refused for a full queue delays a frame's datagrams and drops
// none: the sender waits and sends the same datagrams again, with the
// same numbers, and counts the refusal.
func TestFullQueueDelaysAFrame(t *testing.T) {
	f := isoch.Frames{FPS: 10, Mean: 0.24e6, RNGState: 1} // 3,000 bytes: 3 datagrams
	t0 := time.Unix(1_800_000_000, 0)
	clock := &fakeClock{now: t0}
	counts := &frameCounts{}
	var errs atomic.Int64
	var got []uint64
	refused := false
	fs := &frameSender{
		f: f, size: 1000, batch: 8, clock: clock, sizer: isoch.NewSizer(f),
		stop: make(chan struct{}), counts: counts, sendErrs: &errs,
		stopping: func() bool { return !clock.now.Before(f.Due(t0, 2)) },
		sentNow:  func(int) {},
		send: func(b []byte, n int) (int, error) {
			if !refused && len(got) == 1 {
				refused = true
				return 0, syscall.ENOBUFS
			}
			for j := range n {
				h, _ := Parse(b[j*1000:])
				got = append(got, h.Seq)
			}
			return n, nil
		},
	}
	fs.batch = 1 // one datagram a call, so the refusal falls inside the frame
	buf := make([]byte, 1000)
	(&Header{StreamID: 1}).Put(buf)
	if err := fs.run(buf, t0); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || got[1] != 1 || got[5] != 5 || errs.Load() != 1 || fs.full != 1 {
		t.Errorf("sent %v with %d errors (%d full): want 0-5, one refusal", got, errs.Load(), fs.full)
	}
	if fr := counts.Frames(); fr.Sent != 2 {
		t.Errorf("%+v: want 2 frames", fr)
	}
}
