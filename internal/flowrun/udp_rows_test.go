package flowrun

import (
	"io"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// TestUDPRowsAddUpToTotals runs a UDP stream on loopback into a small
// receive buffer, so that datagrams are lost, and checks that the
// receiver's interval rows, settled, add up to its totals: every loss is
// in the row its datagram was due in, and what arrived after the last row
// is in that row.
func TestUDPRowsAddUpToTotals(t *testing.T) {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = 1200
	s.Rate = 400e6
	s.Window = 8 << 10
	s.Duration = 1200 * time.Millisecond
	s.Interval = 200 * time.Millisecond
	s.LateThreshold = 300 * time.Millisecond
	send, recv := runUDP(t, s, [16]byte{1, 2, 3}, nil)

	total := recv.Streams[0].UDP
	sent := send.Streams[0].UDP.Sent
	if total.Expected != sent {
		t.Errorf("receiver expected %d datagrams, the sender sent %d", total.Expected, sent)
	}
	if total.Lost == 0 {
		t.Logf("no loss this time (%d sent): the sums are checked all the same", sent)
	}
	var rows result.UDP
	for _, iv := range recv.SettledIntervals() {
		u := iv.Streams[0].UDP
		if u.Provisional {
			t.Errorf("row %d still provisional after settling", iv.Index)
		}
		rows.Received += u.Received
		rows.Lost += u.Lost
		rows.Late += u.Late
		rows.Duplicates += u.Duplicates
	}
	if rows.Received != total.Received || rows.Lost != total.Lost || rows.Late != total.Late || rows.Duplicates != total.Duplicates {
		t.Errorf("rows sum to received %d lost %d late %d dups %d; totals %d, %d, %d, %d",
			rows.Received, rows.Lost, rows.Late, rows.Duplicates, total.Received, total.Lost, total.Late, total.Duplicates)
	}
	// The sender's rows add up to its total too.
	var sentRows int64
	for _, iv := range send.Intervals {
		sentRows += iv.Streams[0].UDP.Sent
	}
	if sentRows > sent || sent-sentRows > sent/10 {
		t.Errorf("sender rows sum to %d of %d sent", sentRows, sent)
	}
	t.Logf("sent %d, received %d, lost %d in %d rows", sent, total.Received, total.Lost, len(recv.Intervals))
}

// TestUDPForgedDatagrams: a datagram with the test's token and sequence
// number 10^12, and one with a wrong token, reach a receiver amid a real
// stream. Neither is counted received or makes loss (the totals are
// clamped to what the sender says it sent); both are counted invalid.
func TestUDPForgedDatagrams(t *testing.T) {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = 1000
	s.Rate = 8e6 // 1,000 datagrams a second
	s.Duration = 300 * time.Millisecond
	s.Interval = 100 * time.Millisecond
	token := [16]byte{9, 9, 9}
	send, recv := runUDP(t, s, token, func(sc io.Writer) {
		forge := func(tok [16]byte, seq uint64) {
			b := make([]byte, s.Length)
			h := udpflow.Header{Token: tok, StreamID: 1}
			h.Put(b)
			udpflow.PutSeqTime(b, seq, time.Now().UnixNano())
			if _, err := sc.Write(b); err != nil {
				t.Error(err)
			}
		}
		forge(token, 1_000_000_000_000)
		forge([16]byte{1}, 5)
	})
	sent := send.Streams[0].UDP.Sent
	u := recv.Streams[0].UDP
	if u.Invalid != 2 {
		t.Errorf("invalid %d, want 2 (the forged number and the wrong token)", u.Invalid)
	}
	if u.Expected != sent || u.Received > sent || u.Lost != sent-u.Received {
		t.Errorf("received %d lost %d expected %d; the sender sent %d", u.Received, u.Lost, u.Expected, sent)
	}
}

// TestUDPForgedWithoutMAC: with authentication on, datagrams with the
// test's token and stream but no valid MAC (none, a wrong one, one made
// with another key) are counted forged and invalid, never received, while
// the sender's signed datagrams all count.
func TestUDPForgedWithoutMAC(t *testing.T) {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = 1000
	s.Rate = 8e6
	s.Duration = 300 * time.Millisecond
	s.Interval = 100 * time.Millisecond
	token := [16]byte{7, 7}
	key := []byte("the test's datagram key, 32 byte")
	send, recv := runSignedUDP(t, s, token, key, func(sc io.Writer) {
		forge := func(seq uint64, sign func(b []byte)) {
			b := make([]byte, s.Length)
			h := udpflow.Header{Token: token, StreamID: 1}
			h.Put(b)
			udpflow.PutSeqTime(b, seq, time.Now().UnixNano())
			sign(b)
			if _, err := sc.Write(b); err != nil {
				t.Error(err)
			}
		}
		forge(1, func([]byte) {})                                                               // no MAC
		forge(2, func(b []byte) { b[3] |= 1; copy(b[udpflow.HeaderLen:], "0123456789abcdef") }) // a made-up one
		forge(3, udpflow.NewSigner([]byte("not the test's key at all......")).Sign)             // another key
	})
	sent := send.Streams[0].UDP.Sent
	u := recv.Streams[0].UDP
	if u.Forged != 3 || u.Invalid != 3 {
		t.Errorf("forged %d, invalid %d; want 3 and 3", u.Forged, u.Invalid)
	}
	if sent == 0 || u.Received+u.Lost != sent || u.Duplicates != 0 || u.Received < sent*9/10 {
		t.Errorf("received %d lost %d duplicates %d; the sender sent %d signed datagrams", u.Received, u.Lost, u.Duplicates, sent)
	}
}

// runUDP runs one UDP stream of spec s on loopback, a sending and a
// receiving runner, for s.Duration; during, if set, runs once both have
// started, with the sender's socket. It returns both ends' views.
func runUDP(t *testing.T, s spec.Spec, token [16]byte, during func(sc io.Writer)) (send, recv result.End) {
	t.Helper()
	return runSignedUDP(t, s, token, nil, during)
}

// runSignedUDP is runUDP with both ends holding a datagram key.
func runSignedUDP(t *testing.T, s spec.Spec, token [16]byte, key []byte, during func(sc io.Writer)) (send, recv result.End) {
	t.Helper()
	sc, rc := loopback.UDPPair(t)
	sf, err := NewUDPFlow(sc, s, token, 1, true, key)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := NewUDPFlow(rc, s, token, 1, false, key)
	if err != nil {
		t.Fatal(err)
	}
	// The sender takes its socket off Go's poller once it starts, which
	// closes sc's descriptor: forged datagrams go out through a copy.
	forger, err := sc.File()
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	sender := New(s, []Flow{sf}, nil, nil)
	receiver := New(s, []Flow{rf}, nil, nil)
	receiver.Start()
	sender.Start()
	if during != nil {
		during(forger)
	}
	timer := time.NewTimer(s.Duration)
	<-timer.C
	sender.StopSenders()
	<-sender.Done()
	receiver.SetPeerSent(sender.SentCounts())
	receiver.DrainReceivers(100 * time.Millisecond)
	<-receiver.Done()
	return sender.Finish(result.RoleClient), receiver.Finish(result.RoleServer)
}
