package mcast

import (
	"net/netip"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/iperf2wire"
)

// datagram is sender datagram num (negative: the FIN) of length bytes.
func datagram(t *testing.T, num int64, sent time.Time, length int) []byte {
	t.Helper()
	b := make([]byte, length)
	h := iperf2wire.Header(iperf2wire.Test{Port: 5001, Length: length, Duration: time.Second})
	if err := iperf2wire.Put(b, iperf2wire.Datagram{Seq: num, Sent: sent, Client: h}); err != nil {
		t.Fatal(err)
	}
	return b
}

func drain(ch chan FlowEvent) []FlowEvent {
	var out []FlowEvent
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestReceiverTwoSenders: each sender is accounted for on its own; one
// loses datagrams 3 and 7 (7 of them in the tail too) and re-orders 5,
// the other loses its tail, which only its FIN can tell.
func TestReceiverTwoSenders(t *testing.T) {
	group := netip.MustParseAddrPort("239.1.2.3:5001")
	r := NewReceiver(group, ReceiveConfig{Interval: time.Second})
	ev := make(chan FlowEvent, 100)
	t0 := time.Unix(1_800_000_000, 0)
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Sender a: 1 2 4 6 5 8 9 -10 (3 and 7 lost, 5 re-ordered).
	for i, n := range []int64{1, 2, 4, 6, 5, 8, 9, -10} {
		r.Add(datagram(t, n, at(i*200), 100), a, 4000, at(i*200+1), ev)
	}
	// Sender b: 1 2 3 then its FIN numbered 8: 4 to 7 lost in the tail.
	for i, n := range []int64{1, 2, 3, -8} {
		r.Add(datagram(t, n, at(i*100), 200), b, 4001, at(i*100+2), ev)
	}
	var ended []FlowEvent
	rows := map[int]int64{}
	for _, e := range drain(ev) {
		switch e.Kind {
		case FlowEnded:
			ended = append(ended, e)
		case FlowInterval:
			rows[e.Flow] += e.Bytes
		case FlowStarted:
			if e.Test == nil || e.Test.Port != 5001 {
				t.Errorf("flow %d started without its client header: %+v", e.Flow, e.Test)
			}
		}
	}
	if len(ended) != 2 {
		t.Fatalf("%d flows ended, want 2", len(ended))
	}
	byFrom := map[netip.Addr]FlowEvent{ended[0].From.Addr(): ended[0], ended[1].From.Addr(): ended[1]}
	ea, eb := byFrom[a], byFrom[b]
	if u := ea.UDP; u.Received != 8 || u.Lost != 2 || u.Expected != 10 || u.Reordered != 1 || !ea.ByFIN {
		t.Errorf("sender a: received %d lost %d expected %d reordered %d byFIN %v; want 8 2 10 1 true", u.Received, u.Lost, u.Expected, u.Reordered, ea.ByFIN)
	}
	if u := eb.UDP; u.Received != 4 || u.Lost != 4 || u.Expected != 8 {
		t.Errorf("sender b: received %d lost %d expected %d; want 4 4 8", u.Received, u.Lost, u.Expected)
	}
	if ea.Bytes != 800 || eb.Bytes != 800 || rows[ea.Flow] != 800 || rows[eb.Flow] != 800 {
		t.Errorf("bytes %d %d, in rows %d %d: want 800 each", ea.Bytes, eb.Bytes, rows[ea.Flow], rows[eb.Flow])
	}
	// A straggler behind a's FIN opens no new flow.
	if r.Add(datagram(t, 3, at(2000), 100), a, 4000, at(2001), ev); len(drain(ev)) != 0 {
		t.Error("a datagram behind its sender's FIN opened a flow")
	}
}

func TestReceiverIdleAndLimits(t *testing.T) {
	r := NewReceiver(netip.MustParseAddrPort("[ff3e::1]:5001"), ReceiveConfig{IdleTimeout: time.Second, MaxFlows: 1})
	ev := make(chan FlowEvent, 100)
	t0 := time.Unix(1_800_000_000, 0)
	a, b := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	r.Add(datagram(t, 1, t0, 64), a, 1, t0, ev)
	r.Add(datagram(t, 2, t0, 64), a, 1, t0, ev)
	r.Add(datagram(t, 1, t0, 64), b, 1, t0, ev) // over MaxFlows
	r.Add([]byte{1, 2, 3}, a, 1, t0, ev)        // not a datagram
	r.Add(make([]byte, 40), a, 1, t0, ev)       // numbered 0
	if r.Refused() != 1 || r.Invalid() != 2 {
		t.Errorf("refused %d invalid %d, want 1 and 2", r.Refused(), r.Invalid())
	}
	if r.Tick(t0.Add(999*time.Millisecond), ev) {
		t.Error("ended before its idle timeout")
	}
	if !r.Tick(t0.Add(time.Second), ev) {
		t.Fatal("not ended at its idle timeout")
	}
	evs := drain(ev)
	last := evs[len(evs)-1]
	if last.Kind != FlowEnded || last.ByFIN || last.UDP.Received != 2 || last.Bytes != 128 {
		t.Errorf("end %+v: want an idle end with 2 datagrams, 128 bytes", last)
	}
}

// TestReceiverDoubtsAFarFIN: a FIN numbered far beyond what its sender
// sent (more than stats.MaxJump on) does not count its claim as loss.
func TestReceiverDoubtsAFarFIN(t *testing.T) {
	r := NewReceiver(netip.MustParseAddrPort("239.1.2.3:5001"), ReceiveConfig{})
	ev := make(chan FlowEvent, 100)
	t0 := time.Unix(1_800_000_000, 0)
	a := netip.MustParseAddr("10.0.0.1")
	r.Add(datagram(t, 1, t0, 100), a, 1, t0, ev)
	r.Add(datagram(t, 2, t0, 100), a, 1, t0, ev)
	if !r.Add(datagram(t, -(1<<40), t0, 100), a, 1, t0, ev) {
		t.Fatal("the FIN did not end the flow")
	}
	evs := drain(ev)
	e := evs[len(evs)-1]
	if e.Kind != FlowEnded || e.UDP.Received != 2 || e.UDP.Lost != 0 || e.ByFIN {
		t.Errorf("end: received %d lost %d, by FIN %v; want 2, 0 and the FIN's count doubted", e.UDP.Received, e.UDP.Lost, e.ByFIN)
	}
}
