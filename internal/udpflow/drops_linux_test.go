package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// TestReceiverCountsItsSocketDrops: datagrams sent at a socket whose
// receive buffer is full are dropped by the kernel there, and the
// receiver's count of its own socket's drops is exactly what it missed:
// on loopback nothing else loses a datagram, so received + socket drops
// is what was sent, and every lost datagram is a socket drop.
func TestReceiverCountsItsSocketDrops(t *testing.T) {
	const size, sent = 1000, 300
	token := [16]byte{7}
	a, b := loopback.UDPPair(t)
	if err := b.SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	// Without GRO each datagram is its own skb, so each drop one datagram.
	r, err := NewReceiver(b, ReceiverConfig{Token: token, StreamID: 1, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	h := Header{Token: token, StreamID: 1}
	h.Put(buf)
	// All sent before the receiver reads: the buffer holds a few.
	for seq := range uint64(sent) {
		PutSeqTime(buf, seq, time.Now().UnixNano())
		if _, err := a.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	r.Start(time.Now())
	r.Stop(time.Now().Add(300 * time.Millisecond)) // what is queued is read at once
	<-r.Done()
	u := r.Final(sent)
	if u.SocketDrops == nil {
		t.Fatal("no socket drop count on Linux")
	}
	drops := int64(*u.SocketDrops)
	t.Logf("received %d, lost %d, socket drops %d", u.Received, u.Lost, drops)
	if drops == 0 {
		t.Fatal("the socket dropped nothing: the check compared nothing")
	}
	if u.Received+drops != sent || u.Lost != drops {
		t.Errorf("received %d + socket drops %d ≠ %d sent, or lost %d ≠ socket drops", u.Received, drops, sent, u.Lost)
	}
	if u.SocketDropsGRO {
		t.Error("counted as GRO batches, without GRO")
	}
}
