package tcpflow

import (
	"net"
	"testing"
	"time"
)

func tcpPair(t testing.TB) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); accepted <- c }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func TestSendReceiveCountsAndHistogram(t *testing.T) {
	a, b := tcpPair(t)
	tx := NewStream(1, true, a)
	rx := NewStream(1, false, b)
	epoch := time.Now()
	const total = 3<<20 + 17
	rx.Start(epoch, make([]byte, 64<<10), nil)
	tx.Start(epoch, make([]byte, 128<<10), &countdown{left: total})
	<-tx.Done()
	<-rx.Done()
	if tx.Bytes() != total || rx.Bytes() != total {
		t.Fatalf("sent %d, received %d, want %d", tx.Bytes(), rx.Bytes(), total)
	}
	if tx.Err() != nil || rx.Err() != nil {
		t.Fatalf("errors: %v %v", tx.Err(), rx.Err())
	}
	var reads, bytes int64
	seen := map[int]bool{}
	for _, rl := range rx.ReadLengths() {
		if rl.Length > 64<<10 || rl.Length < 1 {
			t.Errorf("read length %d out of range", rl.Length)
		}
		if seen[rl.Length] {
			t.Errorf("read length %d listed twice", rl.Length)
		}
		seen[rl.Length] = true
		reads += rl.Count
		bytes += int64(rl.Length) * rl.Count
	}
	if len(rx.ReadLengths()) < MaxReadLengths && (reads != rx.Calls() || bytes != total) {
		t.Errorf("histogram: %d reads of %d bytes; counters say %d reads of %d", reads, bytes, rx.Calls(), total)
	}
	if rx.LastByte() <= 0 {
		t.Error("receiver recorded no last-byte time")
	}
}

func TestStopEndsASenderAndTheReceiverDrains(t *testing.T) {
	a, b := tcpPair(t)
	tx := NewStream(1, true, a)
	rx := NewStream(1, false, b)
	epoch := time.Now()
	rx.Start(epoch, make([]byte, 128<<10), nil)
	tx.Start(epoch, make([]byte, 128<<10), nil)
	deadline := time.Now().Add(10 * time.Second)
	for tx.Bytes() < 1<<20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // bounded poll: the sender's count, until the deadline above
	}
	if tx.Bytes() < 1<<20 {
		t.Fatal("sender moved under 1 MiB in 10 s")
	}
	tx.Stop(time.Now())
	rx.Stop(time.Now().Add(5 * time.Second))
	<-tx.Done()
	<-rx.Done()
	if tx.Bytes() != rx.Bytes() {
		t.Fatalf("sent %d, received %d after a stop", tx.Bytes(), rx.Bytes())
	}
	if rx.Err() != nil {
		t.Fatalf("receiver error: %v", rx.Err())
	}
}

func TestZeroCopySendArrivesWhole(t *testing.T) {
	a, b := tcpPair(t)
	tx := NewStream(1, true, a)
	if err := tx.UseZeroCopy(64 << 10); err != nil {
		t.Fatal(err)
	}
	rx := NewStream(1, false, b)
	epoch := time.Now()
	const total = 5<<20 + 123
	rx.Start(epoch, make([]byte, 64<<10), nil)
	tx.Start(epoch, make([]byte, 64<<10), &countdown{left: total})
	<-tx.Done()
	<-rx.Done()
	if tx.Bytes() != total || rx.Bytes() != total || tx.Err() != nil {
		t.Fatalf("sent %d, received %d, want %d (err %v)", tx.Bytes(), rx.Bytes(), total, tx.Err())
	}
}

// countdown is a one-stream Budget of left bytes.
type countdown struct{ left int }

func (c *countdown) Take(want int) int { n := min(want, c.left); c.left -= n; return n }
func (c *countdown) Return(n int)      { c.left += n }
