//go:build linux

package lab

import (
	"fmt"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/race"
)

// wpLeafQdisc returns the qdisc under htb class 1:10 (the limited class) on
// r's interface toward b. It only reports errors, so that a
// session.Observer may call it from the client's goroutine.
func wpLeafQdisc(l *Lab) (QdiscStats, error) {
	qs, err := l.QdiscStats("r", "to-b")
	if err != nil {
		return QdiscStats{}, err
	}
	for _, q := range qs {
		if q.Parent == "1:10" {
			return q, nil
		}
	}
	return QdiscStats{}, fmt.Errorf("no qdisc under htb class 1:10 on r/to-b: %+v", qs)
}

// Issue 4 (e), with wireperf: behind a rate limit, what wireperf counts as
// lost is exactly what the limiting qdisc dropped plus what the receiving
// socket dropped.
//
// r shapes its egress toward b with htb at 50 Mbit/s; a u32 filter puts
// only UDP into the limited class (its leaf is a bfifo of 20 ms at the
// rate), so wireperf's control connection is not limited. wireperf sends
// 1448-byte datagrams at 1.5 times the limit for 2 s, one datagram per
// send (--no-gso: a GSO super-packet would reach the qdisc whole and be
// dropped as one). The qdisc's counters are read just before the data
// starts and after the test. The limit is well below what one paced
// sender manages (about 13,000 datagrams a second, 150 Mbit/s, on an idle
// development VM, but 7,000 to 9,000 when the machine is busy with other
// tests or under the race detector), so that 1.5 times it is really sent;
// under the race detector it is 30 Mbit/s.
func TestAcceptWireperfShapedUDPLoss(t *testing.T) {
	rate := 50e6
	if race.Enabled {
		rate = 30e6
	}
	_, ok := bestOf(t, 2, func(int) (struct{}, bool) {
		l := New(t, shapedChain(1500, Shape{Qdisc: "htb", Rate: rate, Match: &Match{Proto: 17}}))
		defer l.Close()
		a, b := l.Host("a"), l.Host("b")
		port := startServer(t, b)
		sp := wpUDPSpec(2 * time.Second)
		sp.Rate = 1.5 * rate
		sp.NoGSO = true
		var before QdiscStats
		var beforeErr error
		res := wpRun(t, a, b, port, sp, func() { before, beforeErr = wpLeafQdisc(l) })
		if beforeErr != nil {
			t.Fatal(beforeErr)
		}
		after, err := wpLeafQdisc(l)
		if err != nil {
			t.Fatal(err)
		}
		sent, got := wpUDPFlow(t, res)
		rcvbuf := wpRcvbufErrors(t, res.Remote)
		wpLogUDP(t, sent, got, rcvbuf)
		dropped := after.Dropped - before.Dropped
		qsent := after.SentPackets - before.SentPackets
		rx := wpFlow(t, res).Received
		t.Logf("%s leaf under 1:10 (htb %.0f Mbit/s): sent %d packets, dropped %d, backlog now %d; wireperf sent %.1f Mbit/s and received %.1f Mbit/s of payload (the limit allows %.1f)",
			after.Kind, rate/1e6, qsent, dropped, after.BacklogPackets, float64(sent.Sent)*1448*8/sp.Duration.Seconds()/1e6,
			float64(rx.Bytes)*8/rx.Seconds()/1e6, Goodput(rate, 1448+28, 28, FramingTC)/1e6)
		// Re-ordering is not checked: a sending thread that the kernel
		// moves to the other CPU puts its next datagrams on that CPU's
		// backlog queue of the veth pair, which can deliver them first
		// (one such swap was seen); the counts below hold either way.
		if got.Expected != sent.Sent || got.Late != 0 || got.Duplicates != 0 {
			t.Errorf("receiver expected %d (late %d, duplicates %d, re-ordered %d), sender sent %d",
				got.Expected, got.Late, got.Duplicates, got.Reordered, sent.Sent)
		}
		if uint64(got.Lost) != dropped+rcvbuf {
			t.Errorf("wireperf lost %d != qdisc dropped %d + receiver RcvbufErrors %d", got.Lost, dropped, rcvbuf)
		}
		if qsent != uint64(got.Received)+rcvbuf {
			t.Errorf("the qdisc sent %d datagrams, wireperf received %d + RcvbufErrors %d", qsent, got.Received, rcvbuf)
		}
		// The counts above match however many datagrams there were; the
		// test means something only if the limit was overloaded.
		return struct{}{}, dropped > 0
	})
	if !ok {
		t.Error("the sender never overloaded the limit: the qdisc dropped nothing")
	}
}
