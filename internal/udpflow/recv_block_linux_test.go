package udpflow

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// TestReceiverOffPoller: a receiver reads through its own blocking
// descriptor (takeOver), counts every datagram sent to it, and ends
// promptly at Abort although its thread is asleep in recvmmsg with
// nothing to read.
func TestReceiverOffPoller(t *testing.T) {
	const n, size = 200, 1448
	a, b := loopback.UDPPair(t)
	_ = b.SetReadBuffer(1 << 20)
	r, err := NewReceiver(b, ReceiverConfig{StreamID: 7, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	r.Start(time.Now())
	tx, err := newBatchIO(a, size, false)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := tx.send(numbered(n, size), size, n); k != n || err != nil {
		t.Fatalf("sent %d of %d: %v", k, n, err)
	}
	for deadline := time.Now().Add(5 * time.Second); r.Bytes() < n*size; {
		if time.Now().After(deadline) {
			t.Fatalf("received %d bytes of %d", r.Bytes(), n*size)
		}
		time.Sleep(time.Millisecond) // bounded poll: the receiver's count, until the deadline above
	}
	if io := r.io.(*linuxIO); io.rfd < 0 {
		t.Error("the receiver still reads through Go's poller")
	}
	r.Abort()
	select {
	case <-r.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the receiver did not end at Abort")
	}
	if err := r.Err(); err != nil {
		t.Errorf("ended with %v", err)
	}
	u := r.Final(n)
	if u.Received != n || u.Lost != 0 {
		t.Errorf("received %d, lost %d, want %d and 0", u.Received, u.Lost, n)
	}
}

// TestRecvDeadline: after the deadline, a blocked receive returns
// os.ErrDeadlineExceeded, as a Go read does.
func TestRecvDeadline(t *testing.T) {
	_, b := loopback.UDPPair(t)
	rx, err := newBatchIO(b, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rx.close()
	rx.setReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := rx.recv(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("recv past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
}

// TestRecvCoalesces: a read that brought 64 KiB or more and emptied the
// queue has the next read wait coalesceDelay first; a small read does
// not. The wait is what recvBlocking sleeps before its next call. Only a
// GRO receiver reads that much in one call (32 plain datagrams are
// 46 KB), and only when more than one GSO send had queued.
func TestRecvCoalesces(t *testing.T) {
	const size = 1448
	a, b := loopback.UDPPair(t)
	_ = b.SetReadBuffer(1 << 20)
	rx, err := newBatchIO(b, size, true)
	if err != nil {
		t.Fatal(err)
	}
	io := rx.(*linuxIO)
	defer io.close()
	if !io.feat.KernelTimestamps || !io.feat.GRO {
		t.Skip("no kernel receive timestamps or no GRO here: the receiver never waits")
	}
	tx, err := newBatchIO(a, size, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.close()
	// A GSO send carries at most gsoMaxBytes, under coalesceBytes: one
	// arriving alone is a low rate, and the next read does not wait.
	// Two queued together are read in one call of 2 × 44 datagrams.
	n := tx.maxSendBatch(size)
	if !tx.features().GSO || n*size >= coalesceBytes || 2*n*size < coalesceBytes {
		t.Skipf("GSO %v, %d datagrams a send: not the case this test is for", tx.features().GSO, n)
	}
	read := func(want int) {
		t.Helper()
		for got := 0; got < want; {
			segs, err := rx.recv()
			if err != nil {
				t.Fatal(err)
			}
			got += len(segs)
		}
	}
	if k, err := tx.send(numbered(n, size), size, n); k != n || err != nil {
		t.Fatalf("sent %d of %d: %v", k, n, err)
	}
	read(n)
	if io.coalesce != 0 {
		t.Fatalf("after one GSO send's %d bytes the next read waits %v, want 0", n*size, io.coalesce)
	}
	for range 2 {
		if k, err := tx.send(numbered(n, size), size, n); k != n || err != nil {
			t.Fatalf("sent %d of %d: %v", k, n, err)
		}
	}
	read(2 * n)
	if io.coalesce != coalesceDelay {
		t.Fatalf("after two GSO sends read together the next read waits %v, want %v", io.coalesce, coalesceDelay)
	}
	if k, err := tx.send(numbered(1, size), size, 1); k != 1 || err != nil {
		t.Fatalf("sent %d: %v", k, err)
	}
	if segs, err := rx.recv(); err != nil || len(segs) != 1 || io.coalesce != 0 {
		t.Fatalf("a one-datagram read (%d, %v): the next waits %v, want 0", len(segs), err, io.coalesce)
	}
}
