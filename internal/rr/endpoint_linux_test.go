//go:build linux

package rr

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// A send on loopback is stamped by the kernel as it leaves, between the
// wall clock before the send and after it, and the stamp is read once; a
// datagram's arrival is stamped before the read returns.
func TestSendStampOnLoopback(t *testing.T) {
	c, s := udpPair(t)
	e, err := newEndpoint(c, false, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if e.fd != -1 { // a failed check: the release below did not run
			e.release()
		}
	}()
	if !e.sendStamps() || !e.kernelTimestamps() {
		t.Skip("this kernel gives no SO_TIMESTAMPING software stamps")
	}
	msg := make([]byte, 64)
	before := time.Now().UnixNano()
	if err := e.send(msg); err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixNano()
	st := e.sentStamps()
	if st.sw < before || st.sw > after {
		t.Fatalf("send stamp %d outside [%d, %d]", st.sw, before, after)
	}
	if again := e.sentStamps(); again != (kernelStamps{}) {
		t.Fatalf("the error queue held a second stamp %+v", again)
	}

	// The response's receive stamp: before the read returns. The kernel
	// turns receive stamping on for the whole host from a work queue the
	// first time a socket asks (net_enable_timestamp), so the first
	// datagrams may come unstamped (0: unknown, as the prober takes it);
	// a bounded number of them, within 5 s (the work queue's thread may
	// wait that long for a CPU on a loaded machine).
	var rx int64
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; rx == 0 && i < 50000 && time.Now().Before(deadline); i++ {
		sent := time.Now().UnixNano()
		if _, err := s.Write(msg); err != nil {
			t.Fatal(err)
		}
		n, ts, err := e.recv(make([]byte, 128), time.Second)
		if err != nil || n != 64 {
			t.Fatalf("recv: %d, %v", n, err)
		}
		if ts != 0 && (ts < sent || ts > time.Now().UnixNano()) {
			t.Fatalf("receive stamp %d not between the send (%d) and now", ts, sent)
		}
		rx = ts
	}
	if rx == 0 {
		t.Fatal("no datagram stamped on receipt within 50,000 tries and 5 s")
	}

	// The UDP socket left Go's poller when the endpoint took it (its Go
	// connection is closed) and release closed the endpoint's own copy.
	e.release()
	if e.fd != -1 {
		t.Fatalf("release left descriptor %d open", e.fd)
	}
	if _, err := c.Write(msg); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the Go connection after takeover: %v, want it closed", err)
	}
	if c.LocalAddr() == nil || c.RemoteAddr() == nil {
		t.Fatal("the closed Go connection lost its addresses")
	}
}

// The prober and the reflector run their loops on locked threads, in
// blocking system calls and spinning; each stops and leaves no goroutine
// behind, and the prober's report says the send stamps were used, with a
// network RTT no larger than the RTT.
func TestLockedLoopsStopWithoutLeaks(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, busy := range []bool{false, true} {
		for _, mode := range []string{ModeUDP, ModeTCP} {
			var p *Prober
			var r *Reflector
			var err error
			r = NewReflector(ReflectorConfig{MaxRequest: 1472, MaxResponse: 1472, BusyPoll: busy})
			if mode == ModeUDP {
				c, s := udpPair(t)
				r.Go(func() error { return r.ServeUDP(s) })
				p, err = NewProber(c, ProberConfig{Mode: mode, MaxRequest: 1472, MaxResponse: 1472, BusyPoll: busy})
			} else {
				c, s := tcpPair(t)
				r.Go(func() error { return r.ServeTCP(s) })
				p, err = NewProber(c, ProberConfig{Mode: mode, MaxRequest: 1472, MaxResponse: 1472, BusyPoll: busy})
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Run([]Plan{{Request: 64, Response: 64, Count: 300}, {Request: 1472, Response: 1472, Count: 300}})
			p.Close()
			r.Stop()
			r.Wait()
			if err != nil {
				t.Fatalf("%s busy %v: %v", mode, busy, err)
			}
			if !strings.Contains(out.Timestamps, "kernel send time") {
				t.Errorf("%s busy %v: timestamps %q do not name the send stamps", mode, busy, out.Timestamps)
			}
			for _, pt := range out.Points(0, false) {
				if pt.Completed != 300 || pt.NetworkRTT.P50 > pt.RTT.P50 || pt.NetworkRTT.Max > pt.RTT.Max {
					t.Errorf("%s busy %v: %d completed, network RTT %+v, RTT %+v", mode, busy, pt.Completed, pt.NetworkRTT, pt.RTT)
				}
			}
		}
	}
}

// On UDP the send stamps are numbered (OPT_ID): sentStamps stops at the
// last send's stamp, with no read past it, passes over older ones, and
// follows the kernel's numbers when they run ahead of the endpoint's.
func TestSendStampsNumbered(t *testing.T) {
	c, _ := udpPair(t)
	e, err := newEndpoint(c, false, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.release()
	if !e.sendStamps() {
		t.Skip("this kernel gives no SO_TIMESTAMPING send stamps")
	}
	msg := make([]byte, 64)
	for range 3 {
		if err := e.send(msg); err != nil {
			t.Fatal(err)
		}
	}
	st := e.sentStamps()
	if !st.hasID || st.id != 2 || st.sw == 0 {
		t.Fatalf("after three sends: %+v, want stamp number 2", st)
	}
	if _, more := e.errQueueStamps(); more {
		t.Fatal("a stamp left queued after the last send's")
	}

	// Two sends, the endpoint asking for the first's: it stops there.
	for range 2 {
		if err := e.send(msg); err != nil {
			t.Fatal(err)
		}
	}
	e.txSends--
	if st := e.sentStamps(); st.id != 3 {
		t.Fatalf("asked for send 3: got %+v", st)
	}
	next, more := e.errQueueStamps()
	if !more || !next.hasID || next.id != 4 {
		t.Fatalf("after the match, the queue holds %+v (%v), want send 4's stamp unread", next, more)
	}

	// A send the endpoint did not count: the kernel's numbers lead.
	e.txSends = 5
	if err := e.send(msg); err != nil {
		t.Fatal(err)
	}
	e.txSends-- // as if the send had gone uncounted
	if st := e.sentStamps(); st.id != 5 || e.txSends != 6 {
		t.Fatalf("uncounted send: got %+v, next number %d; want stamp 5 and 6", st, e.txSends)
	}
}
