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
		time.Sleep(time.Millisecond)
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
