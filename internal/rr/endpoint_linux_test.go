//go:build linux

package rr

import (
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
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

// stampingEndpoint is c's endpoint with kernel send stamps; the test is
// skipped on a kernel that gives none. The caller releases it.
func stampingEndpoint(t *testing.T, c *net.UDPConn) *endpoint {
	t.Helper()
	e, err := newEndpoint(c, false, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if !e.sendStamps() {
		e.release()
		t.Skip("this kernel gives no SO_TIMESTAMPING send stamps")
	}
	return e
}

// On UDP the send stamps are numbered (OPT_ID) and read in one call:
// readSendStamps returns every stamp queued, each in its send's window,
// and when the queue holds more than it has room for, the newest.
func TestReadSendStampsNumbered(t *testing.T) {
	c, _ := udpPair(t)
	e := stampingEndpoint(t, c)
	defer e.release()
	if b := e.sendStampBatch(); b < 1 || b > maxStampBatch {
		t.Fatalf("batch %d for the default receive buffer, want 1..%d", b, maxStampBatch)
	}
	msg := make([]byte, 64)
	send := func(n int) [][2]int64 {
		windows := make([][2]int64, n)
		for i := range n {
			windows[i][0] = time.Now().UnixNano()
			if err := e.send(msg); err != nil {
				t.Fatal(err)
			}
			windows[i][1] = time.Now().UnixNano()
		}
		return windows
	}
	windows := send(3)
	out := make([]kernelStamps, 8)
	n := e.readSendStamps(out)
	if n != 3 || e.lastSendID() != 2 {
		t.Fatalf("after three sends: %d stamps read, last send number %d; want 3 and 2", n, e.lastSendID())
	}
	for i, st := range out[:n] {
		if !st.hasID || st.id != uint32(i) || st.sw < windows[i][0] || st.sw > windows[i][1] {
			t.Fatalf("stamp %d: %+v, want number %d within [%d, %d]", i, st, i, windows[i][0], windows[i][1])
		}
	}
	if n := e.readSendStamps(out); n != 0 {
		t.Fatalf("a second read found %d stamps in a drained queue", n)
	}

	// Twenty sends against room for eight: the eight newest are kept.
	send(20)
	if n := e.readSendStamps(out); n != 8 {
		t.Fatalf("read %d stamps of 20, want the 8 it has room for", n)
	}
	seen := map[uint32]bool{}
	for _, st := range out {
		seen[st.id] = true
	}
	for id := uint32(15); id <= 22; id++ {
		if !seen[id] {
			t.Fatalf("stamp %d (among the newest eight) missing from %+v", id, out)
		}
	}
	if n := e.readSendStamps(out); n != 0 {
		t.Fatalf("%d stamps left queued after the read", n)
	}
}

// A UDP prober records every back-to-back transaction with its own send
// stamp: over a run of several batches, with a point that ends mid-batch,
// each completed transaction is recorded once and stamped, on IPv4 and
// on IPv6 (whose stamps come with IPV6_RECVERR's numbers).
func TestProberRecordsSendStampsInBatches(t *testing.T) {
	for _, fam := range []struct {
		network string
		ip      net.IP
	}{{"udp4", net.IPv4(127, 0, 0, 1)}, {"udp6", net.IPv6loopback}} {
		t.Run(fam.network, func(t *testing.T) { proberRecordsSendStamps(t, fam.network, fam.ip) })
	}
}

func proberRecordsSendStamps(t *testing.T, network string, ip net.IP) {
	defer goleak.VerifyNone(t)
	c, s := udpPairOn(t, network, ip)
	r := NewReflector(ReflectorConfig{MaxRequest: 1472, MaxResponse: 1472})
	r.Go(func() error { return r.ServeUDP(s) })
	var samples []Sample
	p, err := NewProber(c, ProberConfig{Mode: ModeUDP, MaxRequest: 1472, MaxResponse: 1472,
		OnSample: func(s Sample) { samples = append(samples, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if p.stamped == nil {
		p.Close()
		r.Stop()
		r.Wait()
		t.Skip("this kernel gives no SO_TIMESTAMPING send stamps")
	}
	out, err := p.Run([]Plan{{Request: 64, Response: 64, Count: 101}, {Request: 200, Response: 200, Count: 37}})
	p.Close()
	r.Stop()
	r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	pts := out.Points(0, false)
	done := pts[0].Completed + pts[1].Completed
	if pts[0].Completed != 101 || pts[1].Completed != 37 || int64(len(samples)) != done {
		t.Fatalf("completed %d and %d, %d samples told; want 101, 37 and 138", pts[0].Completed, pts[1].Completed, len(samples))
	}
	// The warm-up's transactions are recorded (into nothing) too.
	if b := p.stamped; b.recorded < done || b.recorded > done+warmup || b.stamped != b.recorded || len(b.pending) != 0 {
		t.Fatalf("recorded %d, stamped %d, %d still held; want %d and up to %d of warm-up, all stamped, none held",
			b.recorded, b.stamped, len(b.pending), done, warmup)
	}
	for i := 1; i < len(samples); i++ {
		if samples[i].Done.Before(samples[i-1].Done) || i < 101 && samples[i].Point != 0 || i >= 101 && samples[i].Point != 1 {
			t.Fatalf("sample %d %+v after %+v: out of order", i, samples[i], samples[i-1])
		}
	}
}

// A server with one P (pinned to one CPU) still answers from a raw wait:
// the answering loop raises GOMAXPROCS to two while it runs, takes the
// raw slot that leaves one P to the rest of the process, and gives both
// back when it ends.
func TestReflectorWaitsRawWithOneP(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment: the process's P count is the user's, and kept")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if n := rawWaiters.Load(); n != 0 {
		t.Fatalf("%d raw waiters before the test", n)
	}
	c, s := udpPair(t)
	r := NewReflector(ReflectorConfig{MaxRequest: 1472, MaxResponse: 1472})
	r.Go(func() error { return r.ServeUDP(s) })
	// One answered request: the loop has its endpoint, and waits.
	req := make([]byte, 64)
	h := Header{Kind: KindRequest, Length: 64, Response: 64, Seq: 1}
	h.Put(req)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp := make([]byte, 128)
	n, err := c.Read(resp)
	if err != nil || n != 64 {
		t.Fatalf("response: %d bytes, %v", n, err)
	}
	procs, slots := runtime.GOMAXPROCS(0), rawWaiters.Load()
	r.Stop()
	r.Wait()
	if procs != 2 || slots != 1 {
		t.Fatalf("while the loop ran: GOMAXPROCS %d, %d raw waiters; want 2 and 1", procs, slots)
	}
	if got := runtime.GOMAXPROCS(0); got != 1 || rawWaiters.Load() != 0 {
		t.Fatalf("after the loop: GOMAXPROCS %d, %d raw waiters; want 1 and 0", got, rawWaiters.Load())
	}
}

// A send refused by an earlier ICMP error (the peer's port closed) is one
// this end counts and the kernel's stamp numbers do not (Linux 6.x rolls
// its count back): every send after it still gets its own stamp, found
// by its window, and the refused ones none.
func TestSendStampsPastARefusedSend(t *testing.T) {
	c, s := udpPair(t)
	_ = s.Close() // nobody listens: each datagram draws a port unreachable
	e := stampingEndpoint(t, c)
	defer e.release()
	msg := make([]byte, 64)
	var pending []pendingSend
	var refused []bool
	for range 8 {
		t1 := time.Now().UnixNano()
		err := unix.Send(e.fd, msg, 0) // as e.send, which keeps the error to itself
		e.txSends++
		t4 := time.Now().UnixNano()
		if err != nil && err != unix.ECONNREFUSED {
			t.Fatal(err)
		}
		refused = append(refused, err != nil)
		pending = append(pending, pendingSend{s: sample{t1: t1, t4: t4}, id: e.lastSendID()})
	}
	nRefused := 0
	for _, r := range refused {
		if r {
			nRefused++
		}
	}
	if nRefused == 0 {
		t.Skip("no send was refused: the port unreachable did not come back in time")
	}
	t.Logf("refused: %v", refused)
	stamps := make([]kernelStamps, 32)
	n := e.readSendStamps(stamps)
	if n != len(refused)-nRefused {
		t.Fatalf("%d stamps for %d sends of which %d were refused", n, len(refused), nRefused)
	}
	shift := matchSendStamps(pending, mergeStamps(nil, stamps[:n]), 0)
	for i, p := range pending {
		if got := p.s.tx != 0; got == refused[i] {
			t.Errorf("send %d (refused %v): stamp %d", i, refused[i], p.s.tx)
		}
	}
	if int32(shift) != -int32(nRefused) && !refused[len(refused)-1] {
		t.Errorf("shift %d after %d refused sends", int32(shift), nRefused)
	}
}
