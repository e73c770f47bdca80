package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// numbered lays n datagrams of size bytes end to end, each with its
// header and sequence number.
func numbered(n, size int) []byte {
	buf := make([]byte, n*size)
	h := Header{StreamID: 7}
	for i := 0; i < n; i++ {
		h.Put(buf[i*size:])
		PutSeqTime(buf[i*size:], uint64(i), int64(i))
	}
	return buf
}

// TestBatchSendRecv sends a batch of datagrams in one call, with GSO
// (sends the kernel cuts, each under 64 KiB: 44 datagrams of 1448 bytes,
// so two sends here) and without (sendmmsg), and receives them with and
// without GRO: each comes back whole, in order, and the segments of one
// GRO batch share its receive time.
func TestBatchSendRecv(t *testing.T) {
	const n, size = 50, 1448
	for _, tc := range []struct {
		name     string
		gso, gro bool
	}{
		{"sendmmsg, recvmmsg", false, false},
		{"GSO, GRO", true, true},
		{"GSO to a receiver without GRO", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := loopback.UDPPair(t)
			_ = b.SetReadBuffer(1 << 20)
			tx, err := newBatchIO(a, size, tc.gso)
			if err != nil {
				t.Fatal(err)
			}
			rx, err := newBatchIO(b, size, tc.gro)
			if err != nil {
				t.Fatal(err)
			}
			if tc.gso && tx.maxSendBatch(size) != 44 {
				t.Errorf("GSO batch %d datagrams of %d bytes, want 44 (under 65000 bytes)", tx.maxSendBatch(size), size)
			}
			if k, err := tx.send(numbered(n, size), size, n); k != n || err != nil {
				t.Fatalf("sent %d of %d: %v", k, n, err)
			}
			rx.setReadDeadline(time.Now().Add(5 * time.Second))
			var got []Segment
			for len(got) < n {
				segs, err := rx.recv()
				if err != nil {
					t.Fatalf("after %d datagrams: %v", len(got), err)
				}
				for _, s := range segs {
					s.Payload = append([]byte(nil), s.Payload...) // valid until the next recv
					got = append(got, s)
				}
			}
			if len(got) != n {
				t.Fatalf("%d segments, want %d", len(got), n)
			}
			shared := 0
			for i, s := range got {
				h, err := Parse(s.Payload)
				if err != nil || len(s.Payload) != size || h.Seq != uint64(i) || h.StreamID != 7 {
					t.Fatalf("segment %d: %d bytes, seq %d, stream %d, %v", i, len(s.Payload), h.Seq, h.StreamID, err)
				}
				if s.RecvNs <= 0 {
					t.Errorf("segment %d has no receive time", i)
				}
				if s.Shared {
					shared++
					if s.RecvNs != got[i-1].RecvNs {
						t.Errorf("segment %d shares a receive time it does not have", i)
					}
				}
			}
			if !rx.features().GRO && shared != 0 {
				t.Errorf("%d segments share a time without GRO", shared)
			}
			if rx.features().GRO && tx.features().GSO && shared == 0 {
				t.Error("GSO sends reached a GRO receiver, and no segment shared a batch")
			}
			t.Logf("features: send %+v, receive %+v; %d of %d segments shared a GRO batch's time", tx.features(), rx.features(), shared, n)
		})
	}
}

// countdown is a Budget of left bytes for one sender.
type countdown struct{ left int }

func (c *countdown) Take(want int) int { n := min(want, c.left); c.left -= n; return n }
func (c *countdown) Return(n int)      { c.left += n }

// TestSenderBudget: a sender sends whole datagrams of its budget in
// batches, and what remains of it, less than a datagram, as one more
// (iperf sends whole blocks).
func TestSenderBudget(t *testing.T) {
	const size = 1000
	a, b := loopback.UDPPair(t)
	_ = b.SetReadBuffer(1 << 20)
	s, err := NewSender(a, SenderConfig{StreamID: 3, Size: size, GSO: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(time.Now(), &countdown{left: 5*size + size/2})
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		s.Stop()
		t.Fatal("the sender did not stop when its budget was spent")
	}
	if s.Sent() != 6 || s.Err() != nil {
		t.Fatalf("sent %d datagrams (%v), want 6: five whole, and the half as one", s.Sent(), s.Err())
	}
	rx, err := newBatchIO(b, size, false)
	if err != nil {
		t.Fatal(err)
	}
	rx.setReadDeadline(time.Now().Add(5 * time.Second))
	for seen := uint64(0); seen < 6; {
		segs, err := rx.recv()
		if err != nil {
			t.Fatalf("after %d datagrams: %v", seen, err)
		}
		for _, sg := range segs {
			if h, err := Parse(sg.Payload); err != nil || h.Seq != seen || h.StreamID != 3 {
				t.Fatalf("datagram %d: seq %d stream %d, %v", seen, h.Seq, h.StreamID, err)
			}
			seen++
		}
	}
}
