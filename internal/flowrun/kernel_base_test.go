package flowrun

import (
	"testing"

	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// TestReceiverBase: a 24-byte hello was read; 1,000 bytes of test data
// arrive between the reads of the counter and of the unread count. Taken
// once, the base would be 24 − 1,000 (clipped to 0), and the rows would
// count the hello as data (a race pass once read 10,485,784 of
// 10,485,760 bytes). Read again until the unread count holds, it is 24.
func TestReceiverBase(t *testing.T) {
	var counter uint64 = 24 // the hello, read
	unread := 0
	arrive := func(n int) { counter += uint64(n); unread += n }
	step := 0
	queued := func() (int, error) {
		step++
		if step == 2 { // between the first read of the counter and the second of the unread count
			arrive(1000)
		}
		return unread, nil
	}
	get := func() (*tcpinfo.Info, error) { return &tcpinfo.Info{BytesReceived: counter}, nil }
	_, base, err := receiverBase(queued, get)
	if err != nil || base != 24 {
		t.Fatalf("base %d, %v; want the hello's 24 bytes", base, err)
	}
	if step < 4 {
		t.Fatalf("%d reads of the unread count: the arrival went unseen", step)
	}
}
