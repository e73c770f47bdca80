package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// frameReceiver is a Receiver without a socket: its account takes the
// datagrams a test makes, as the read loop hands them over.
func frameReceiver() *Receiver {
	var token [16]byte
	token[0] = 7
	return &Receiver{
		cfg: ReceiverConfig{Token: token, StreamID: 1, Frames: true}, epoch: time.Now(),
		m:     newMatcher(token, 1),
		stats: stats.NewUDPReceiver(stats.UDPConfig{LateThreshold: time.Hour}),
		fr:    newFrameAcct(),
	}
}

// frameDatagram is datagram seq, index i of frame k (count datagrams,
// due at k × 10 ms), received at recv ms.
func frameDatagram(r *Receiver, seq uint64, k uint64, i, count uint32, recvMs float64) Segment {
	b := make([]byte, 200)
	t0 := int64(1_800_000_000e9)
	due := t0 + int64(k)*10e6
	(&Header{Token: r.cfg.Token, StreamID: 1, Seq: seq, SentNs: due}).Put(b)
	PutFrame(b, Frame{Number: k, DueNs: due, Count: count, Index: i})
	return Segment{Payload: b, RecvNs: t0 + int64(recvMs*1e6)}
}

func TestFrameAccounting(t *testing.T) {
	r := frameReceiver()
	d := func(seq, k uint64, i uint32, recvMs float64) Segment { return frameDatagram(r, seq, k, i, 3, recvMs) }
	r.account([]Segment{
		// Frame 0, whole, its datagrams re-ordered and one duplicated:
		// latency 4 ms (its last arrival at 4 ms, due at 0).
		d(0, 0, 0, 1), d(2, 0, 2, 2), d(2, 0, 2, 2.5), d(1, 0, 1, 4),
		// Frame 1 (due at 10 ms) loses its first datagram, frame 2 its
		// middle one, frame 3 its last.
		d(4, 1, 1, 11), d(5, 1, 2, 12),
		d(6, 2, 0, 21), d(8, 2, 2, 22),
		d(9, 3, 0, 31), d(10, 3, 1, 32),
		// Frame 4 is lost whole; frame 5 arrives whole, latency 6 ms.
		d(15, 5, 0, 51), d(16, 5, 1, 52), d(17, 5, 2, 56),
	})
	row := r.Cut()
	if f := row.Frames; f == nil || f.Complete != 2 || f.Incomplete != 0 || f.Skipped != 0 ||
		f.Latency == nil || f.Latency.Count != 2 || f.Latency.Min < 3960 || f.Latency.Min > 4040 || f.Latency.Max < 5940 || f.Latency.Max > 6060 { // HDR: two digits
		t.Fatalf("row: %+v (latency %+v); want 2 complete at 4 and 6 ms, the rest not yet judged", f, f.Latency)
	}
	u := r.Final(18)
	f := u.Frames
	want := result.Frames{Seen: 5, Complete: 2, Incomplete: 3, Skipped: 1, JitterSamples: 1}
	got := *f
	got.Latency, got.JitterMs = nil, 0
	if got != want {
		t.Errorf("total %+v\nwant  %+v", got, want)
	}
	if f.JitterMs < 0.12 || f.JitterMs > 0.13 { // |6 − 4| / 16 ms
		t.Errorf("jitter %.4f ms, want 0.125", f.JitterMs)
	}
	if u.Duplicates != 1 || u.Lost != 6 { // seq 3, 7, 11 and frame 4's 12-14
		t.Errorf("datagrams: %d duplicates, %d lost; want 1 and 6", u.Duplicates, u.Lost)
	}
}

func TestFrameCutByTheSendersStop(t *testing.T) {
	r := frameReceiver()
	// Frame 0 whole; frame 1's first two of three datagrams, and then the
	// sender stopped: it sent 5 datagrams in all.
	r.account([]Segment{frameDatagram(r, 0, 0, 0, 2, 1), frameDatagram(r, 1, 0, 1, 2, 2),
		frameDatagram(r, 2, 1, 0, 3, 11), frameDatagram(r, 3, 1, 1, 3, 12)})
	f := r.Final(4).Frames
	if f.Complete != 1 || f.Cut != 1 || f.Incomplete != 0 {
		t.Errorf("%+v: want 1 complete, 1 cut by the stop, none incomplete", *f)
	}
	r = frameReceiver()
	r.account([]Segment{frameDatagram(r, 0, 0, 0, 2, 1), frameDatagram(r, 2, 1, 0, 3, 11)})
	if f := r.Final(5).Frames; f.Incomplete != 2 || f.Cut != 0 {
		t.Errorf("%+v: want 2 incomplete (their missing datagrams were sent)", *f)
	}
}

func TestFrameAccountingBounded(t *testing.T) {
	r := frameReceiver()
	// Every frame loses its second datagram: each is judged incomplete
	// once it falls frameWindow frames behind, so few stay open.
	for k := uint64(0); k < 1000; k++ {
		r.account([]Segment{frameDatagram(r, 2*k, k, 0, 2, float64(k)*10)})
		if len(r.fr.open) > frameWindow {
			t.Fatalf("%d frames open", len(r.fr.open))
		}
	}
	// A frame number far beyond the newest is no sender's, and does not
	// count the frames in between as skipped.
	r.account([]Segment{frameDatagram(r, 2000, 1<<40, 0, 1, 1e4)})
	f := r.Final(-1).Frames
	if f.Incomplete != 1000 || f.Skipped != 0 || f.Complete != 0 {
		t.Errorf("%+v: want 1000 incomplete, nothing skipped", *f)
	}
	if u := r.Final(-1); u.Invalid == 0 {
		t.Error("the far frame number was not counted invalid")
	}
}

func TestFrameDatagramWithoutFields(t *testing.T) {
	r := frameReceiver()
	b := make([]byte, 100)
	(&Header{Token: r.cfg.Token, StreamID: 1}).Put(b) // no frame flag
	r.account([]Segment{{Payload: b}})
	if r.Foreign() != 1 || r.Bytes() != 0 {
		t.Errorf("foreign %d, bytes %d: a datagram without frame fields is not the sender's", r.Foreign(), r.Bytes())
	}
}

func TestFrameFieldsSigned(t *testing.T) {
	s := NewSigner([]byte("key"))
	b := make([]byte, 100)
	(&Header{StreamID: 1, Seq: 3}).Put(b)
	PutFrame(b, Frame{Number: 1, DueNs: 5, Count: 2, Index: 1})
	s.Sign(b)
	if !s.Verify(b) {
		t.Fatal("a signed isochronous datagram does not verify")
	}
	b[50]++ // the frame's due time: covered by the MAC
	if s.Verify(b) {
		t.Error("a changed frame field still verifies")
	}
}

func FuzzParseFrame(f *testing.F) {
	b := make([]byte, FrameHeaderLen)
	(&Header{StreamID: 1}).Put(b)
	PutFrame(b, Frame{Number: 9, DueNs: 1, Count: 3, Index: 2})
	f.Add(b)
	f.Add(b[:FrameHeaderLen-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFrame(b)
		if err != nil {
			return
		}
		if len(b) < FrameHeaderLen || fr.Count == 0 || fr.Count > MaxFrameDatagrams || fr.Index >= fr.Count {
			t.Fatalf("accepted %+v from %d bytes", fr, len(b))
		}
		c := make([]byte, FrameHeaderLen)
		copy(c, b)
		PutFrame(c, fr)
		if again, err := ParseFrame(c); err != nil || again != fr {
			t.Fatalf("round trip: %+v %v, want %+v", again, err, fr)
		}
	})
}
