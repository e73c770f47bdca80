package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// TestReceiverIgnoresItsOwnHellos: over a long path the client's hellos,
// resent until the server's ready arrives, reach the stream's socket
// after the server took it over. They are the stream's own set-up: not
// test data, and not counted as another's datagrams. A hello of another
// token is.
func TestReceiverIgnoresItsOwnHellos(t *testing.T) {
	const size = 1448
	token := [16]byte{1, 2, 3}
	a, b := loopback.UDPPair(t)
	r, err := NewReceiver(b, ReceiverConfig{Token: token, StreamID: 3, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	r.Start(time.Now())
	own := Hello{Token: token, StreamID: 3}.MarshalHello()
	other := Hello{Token: [16]byte{9}, StreamID: 3}.MarshalHello()
	for range 4 {
		if _, err := a.Write(own); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Write(other); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); r.Foreign() < 1; {
		if time.Now().After(deadline) {
			t.Fatal("the foreign hello was not counted")
		}
		time.Sleep(time.Millisecond) // bounded poll: the foreign count, until the deadline above
	}
	r.Abort()
	<-r.Done()
	if got := r.Foreign(); got != 1 {
		t.Errorf("%d datagrams counted as not the sender's, want 1 (the other token's hello)", got)
	}
	if r.Bytes() != 0 {
		t.Errorf("%d bytes received from hellos", r.Bytes())
	}
}
