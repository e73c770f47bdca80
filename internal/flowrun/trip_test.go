package flowrun

import (
	"net"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// TestTCPFlowTripTimes: a receiving flow with --trip-times carries the
// blocks timed in a row on the row, and its total leaves out the blocks
// of the omitted start; a sending flow carries none.
func TestTCPFlowTripTimes(t *testing.T) {
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
	if s == nil {
		t.Fatal("accept failed")
	}
	const blockLen, blocks = 4096, 50
	tx := tcpflow.NewStream(1, true, c.(*net.TCPConn))
	rx := tcpflow.NewStream(1, false, s.(*net.TCPConn))
	tx.UseTripTimes(blockLen)
	rx.UseTripTimes(blockLen)
	send, recv := NewTCPFlow(tx, blockLen, 0), NewTCPFlow(rx, blockLen, 0)
	defer send.Close()
	defer recv.Close()
	epoch := time.Now()
	recv.Start(Begin{Epoch: epoch})
	send.Start(Begin{Epoch: epoch, Budget: NewBudget(blocks * blockLen)})
	<-send.Done()
	<-recv.Done()

	var row, sent result.StreamInterval
	recv.Sample(&row, false)
	send.Sample(&sent, false)
	if row.TripTimes == nil || row.TripTimes.Count != blocks || row.TripTimes.Negative != 0 {
		t.Fatalf("the receiver's row: trip times %+v, want %d blocks", row.TripTimes, blocks)
	}
	if sent.TripTimes != nil {
		t.Errorf("the sender's row has trip times %+v", sent.TripTimes)
	}
	var whole result.Stream
	recv.Total(&whole)
	if whole.TripTimes == nil || whole.TripTimes.Count != blocks {
		t.Fatalf("the receiver's total: %+v, want %d blocks", whole.TripTimes, blocks)
	}
	recv.MarkOmitEnd() // every block was in the omitted start
	var counted result.Stream
	recv.Total(&counted)
	if counted.TripTimes == nil || counted.TripTimes.Count != 0 {
		t.Errorf("the total after the omitted start: %+v, want no blocks", counted.TripTimes)
	}
}
