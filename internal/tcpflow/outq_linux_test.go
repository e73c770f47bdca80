package tcpflow

import (
	"io"
	"testing"
	"time"
)

// Unacked is what the peer has not yet acknowledged: bytes written to a
// peer that reads nothing stay partly in the sender's socket, and none
// once the peer has read them all.
func TestUnacked(t *testing.T) {
	a, b := tcpPair(t)
	_ = a.SetWriteBuffer(4 << 20)
	_ = b.SetReadBuffer(64 << 10) // the peer's window is far smaller than what is written
	st := NewStream(1, true, a)
	block := make([]byte, 1<<20)
	written := 0
	_ = a.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
	for written < 8<<20 {
		n, err := a.Write(block)
		written += n
		if err != nil {
			break // the socket is full: the peer reads nothing
		}
	}
	n, err := st.Unacked()
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 || n > written {
		t.Fatalf("%d bytes unacknowledged of %d written to a peer that reads nothing", n, written)
	}
	if _, err := io.CopyN(io.Discard, b, int64(written)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, err = st.Unacked(); err != nil || n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still unacknowledged 5 s after the peer read all %d", n, written)
		}
		time.Sleep(time.Millisecond) // bounded poll: the last ACK, within the deadline above
	}
	if err != nil {
		t.Fatal(err)
	}
}
