package rr

import (
	"bytes"
	"errors"
	"math"
	"net"
	"os"
	"testing"
	"time"
)

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Kind: KindResponse, Length: 1472, Response: 0, Seq: 1<<40 + 7, T1: -5, T2: 1e18, T3: 1e18 + 123}
	b := make([]byte, HeaderLen)
	h.Put(b)
	got, err := Parse(b)
	if err != nil || got != h {
		t.Fatalf("Parse(Put(%+v)) = %+v, %v", h, got, err)
	}
	for _, tc := range []struct {
		name string
		mut  func([]byte) []byte
		want error
	}{
		{"short", func(b []byte) []byte { return b[:HeaderLen-1] }, ErrShort},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, ErrNotOurs},
		{"version", func(b []byte) []byte { b[2] = 9; return b }, ErrBadVersion},
		{"kind", func(b []byte) []byte { b[3] = 7; return b }, ErrNotOurs},
		{"length", func(b []byte) []byte { b[4], b[5], b[6], b[7] = 0, 0, 0, 3; return b }, ErrBadLength},
	} {
		c := bytes.Clone(b)
		if _, err := Parse(tc.mut(c)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	b := make([]byte, HeaderLen)
	(&Header{Kind: KindRequest, Length: 64, Response: 64}).Put(b)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Parse(b)
		if err != nil {
			return
		}
		if h.Length < HeaderLen || h.Kind != KindRequest && h.Kind != KindResponse {
			t.Fatalf("accepted %+v", h)
		}
		c := make([]byte, HeaderLen)
		h.Put(c)
		if !bytes.Equal(c[:12], b[:12]) || !bytes.Equal(c[16:], b[16:HeaderLen]) {
			t.Fatalf("round trip changed the header")
		}
	})
}

// udpPair returns two UDP sockets on loopback connected to each other.
func udpPair(t *testing.T) (client, server *net.UDPConn) {
	t.Helper()
	return udpPairOn(t, "udp4", net.IPv4(127, 0, 0, 1))
}

// udpPairOn is udpPair on network ("udp4" or "udp6") and its loopback
// address ip; it skips the test where the host has no such loopback.
func udpPairOn(t *testing.T, network string, ip net.IP) (client, server *net.UDPConn) {
	t.Helper()
	s, err := net.ListenUDP(network, &net.UDPAddr{IP: ip})
	if err != nil {
		if network == "udp6" {
			t.Skipf("no IPv6 loopback here: %v", err)
		}
		t.Fatal(err)
	}
	saddr := s.LocalAddr().(*net.UDPAddr)
	c, err := net.DialUDP(network, nil, saddr)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	server, err = net.DialUDP(network, saddr, c.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); _ = server.Close() })
	return c, server
}

func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln := listenTCP(t)
	defer ln.Close()
	return connectTo(t, ln)
}

func listenTCP(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// connectTo returns both ends of a new connection to ln; the test closes
// the client's end.
func connectTo(t *testing.T, ln *net.TCPListener) (client, server *net.TCPConn) {
	t.Helper()
	c, err := net.DialTCP("tcp4", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
	return c, s
}

func checkPoint(t *testing.T, pts []pointView, want int64) {
	t.Helper()
	for _, p := range pts {
		if p.completed < want || p.rttP50 <= 0 || p.rttP50 > 50e3 || p.netP50 > p.rttP50 || p.srvP50 <= 0 {
			t.Errorf("point %+v: want at least %d transactions with a sane RTT", p, want)
		}
	}
}

type pointView struct {
	req, resp              int
	completed, lost        int64
	rttP50, netP50, srvP50 float64
}

func run(t *testing.T, p *Prober, plans []Plan) []pointView {
	t.Helper()
	out, err := p.Run(plans)
	if err != nil {
		t.Fatal(err)
	}
	var v []pointView
	for _, pt := range out.Points(0, true) {
		v = append(v, pointView{pt.RequestSize, pt.ResponseSize, pt.Completed, pt.Lost, pt.RTT.P50, pt.NetworkRTT.P50, pt.ServerTime.P50})
		if pt.ForwardOWD == nil || pt.BackwardOWD == nil || pt.RTTHistogram == nil {
			t.Errorf("point lacks OWD or histogram: %+v", pt)
		}
	}
	return v
}

func TestUDPLoopback(t *testing.T) {
	for _, busy := range []bool{false, true} {
		c, s := udpPair(t)
		r := NewReflector(ReflectorConfig{MaxRequest: 1472, MaxResponse: 1472, BusyPoll: busy})
		r.Go(func() error { return r.ServeUDP(s) })
		p, err := NewProber(c, ProberConfig{Mode: ModeUDP, MaxRequest: 1472, MaxResponse: 1472, BusyPoll: busy})
		if err != nil {
			t.Fatal(err)
		}
		v := run(t, p, []Plan{{Request: 64, Response: 64, Count: 500}, {Request: 1472, Response: 100, Count: 500}})
		p.Close()
		r.Stop()
		r.Wait()
		checkPoint(t, v, 500)
		rep := r.Report(ModeUDP)
		if rep.Served < 1000 || rep.ServerTime == nil {
			t.Errorf("server report %+v", rep)
		}
		t.Logf("busy %v: %+v; server %+v", busy, v, rep)
	}
}

func TestTCPLoopback(t *testing.T) {
	c, s := tcpPair(t)
	r := NewReflector(ReflectorConfig{MaxRequest: 100000, MaxResponse: 100000})
	r.Go(func() error { return r.ServeTCP(s) })
	p, err := NewProber(c, ProberConfig{Mode: ModeTCP, MaxRequest: 100000, MaxResponse: 100000})
	if err != nil {
		t.Fatal(err)
	}
	v := run(t, p, []Plan{{Request: 64, Response: 64, Count: 300}, {Request: 100000, Response: 48, Count: 50}, {Request: 48, Response: 100000, Count: 50}})
	p.Close()
	r.Stop()
	r.Wait()
	checkPoint(t, v, 50)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestCRRLoopback(t *testing.T) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hello := []byte("HELLO!")
	r := NewReflector(ReflectorConfig{MaxRequest: 512, MaxResponse: 512})
	r.StartCRR(time.Second)
	go func() {
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			b := make([]byte, len(hello))
			if _, err := c.Read(b); err != nil || !bytes.Equal(b, hello) {
				t.Errorf("hello %q, %v", b, err)
			}
			r.OfferCRR(c)
		}
	}()
	p, err := NewProber(nil, ProberConfig{Mode: ModeCRR, MaxRequest: 512, MaxResponse: 512,
		Addr: ln.Addr().(*net.TCPAddr), Hello: hello})
	if err != nil {
		t.Fatal(err)
	}
	v := run(t, p, []Plan{{Request: 64, Response: 512, Count: 200}})
	checkPoint(t, v, 200)
	r.Stop()
	r.Wait()
	if rep := r.Report(ModeCRR); rep.Connections < 200 {
		t.Errorf("server saw %d connections", rep.Connections)
	}
}

func TestIsochronousUDPAndLoss(t *testing.T) {
	c, s := udpPair(t)
	// A reflector that drops every fifth request.
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 2048)
		_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
		for i := 0; ; i++ {
			n, err := s.Read(b)
			if err != nil {
				return
			}
			h, err := Parse(b[:n])
			if err != nil {
				continue
			}
			if h.Seq == 1<<62 {
				return
			}
			if i%5 == 4 {
				continue
			}
			h.Kind, h.Length = KindResponse, h.Response
			h.T2 = time.Now().UnixNano()
			h.T3 = h.T2
			h.Put(b)
			_, _ = s.Write(b[:h.Length])
		}
	}()
	// The timeout only has to tell a dropped request from an answered
	// one: 500 ms, so that a reflector slowed by a loaded machine (a
	// response 50 ms late was seen under -race) still counts as answered.
	p, err := NewProber(c, ProberConfig{Mode: ModeUDP, Interval: 2 * time.Millisecond, Timeout: 500 * time.Millisecond,
		MaxRequest: 128, MaxResponse: 128, NoWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run([]Plan{{Request: 64, Response: 128, Count: 200}})
	if err != nil {
		t.Fatal(err)
	}
	pt := out.Points(0, false)[0]
	if pt.Sent != 200 || pt.Lost != 40 || pt.Completed != 160 {
		t.Errorf("sent %d lost %d completed %d, want 200, 40, 160", pt.Sent, pt.Lost, pt.Completed)
	}
	// The pacer skips a slot it would send more than an interval late
	// (a VM's timers can wake milliseconds late), so the mean may exceed
	// the target; it never falls below it.
	if pt.Spacing == nil || pt.Spacing.Samples != 200 || pt.Spacing.MeanNs < 1.95e6 {
		t.Errorf("spacing %+v, want 200 requests 2 ms or more apart", pt.Spacing)
	}
	if pt.ForwardOWD != nil {
		t.Errorf("one-way delays without a clock offset")
	}
	p.Close()
	_ = s.SetReadDeadline(time.Now())
	<-done
}

// The crr workers are a fixed set with a short queue: what they have no
// room for is closed at once, and a connection that sends no request, or
// trickles one in, is closed when its wait is up, whatever it does.
func TestCRRWorkersAreBounded(t *testing.T) {
	ln := listenTCP(t)
	defer ln.Close()
	accept := func() (client, server *net.TCPConn) { return connectTo(t, ln) }
	const wait = 300 * time.Millisecond
	r := NewReflector(ReflectorConfig{MaxRequest: 512, MaxResponse: 512})
	r.StartCRR(wait)
	start := time.Now()
	// A trickler holds a worker for its wait at most, then the idle ones.
	trickle, s := accept()
	idle := []*net.TCPConn{trickle}
	if !r.OfferCRR(s) {
		t.Fatal("the first connection was turned away")
	}
	for i := 1; i < crrWorkers+crrQueue; i++ {
		if i == crrWorkers {
			// The workers take their connections off the queue; on a
			// loaded machine not at once. Then the queue is all free.
			for deadline := time.Now().Add(10 * time.Second); len(r.crr) > 0; {
				if time.Now().After(deadline) {
					t.Fatalf("the workers left %d connections queued", len(r.crr))
				}
				time.Sleep(time.Millisecond) // bounded poll: the queue, until the deadline above
			}
		}
		c, s := accept()
		if !r.OfferCRR(s) {
			t.Fatalf("connection %d turned away; the workers and the queue have room for %d", i, crrWorkers+crrQueue)
		}
		idle = append(idle, c)
	}
	extra, sx := accept()
	if r.OfferCRR(sx) {
		t.Fatal("a connection past the workers and the queue was taken")
	}
	if got := r.TurnedAway(); got != 1 {
		t.Errorf("TurnedAway = %d, want 1", got)
	}
	closed := func(c *net.TCPConn, within time.Duration) bool {
		_ = c.SetReadDeadline(time.Now().Add(within))
		var b [1]byte
		_, err := c.Read(b[:])
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	if !closed(extra, time.Second) {
		t.Fatal("the turned-away connection is still open")
	}
	stopTrickle := make(chan struct{})
	defer close(stopTrickle)
	go func() {
		hdr := make([]byte, HeaderLen)
		(&Header{Kind: KindRequest, Length: 512, Response: 64}).Put(hdr)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < len(hdr); i++ {
			if _, err := trickle.Write(hdr[i : i+1]); err != nil {
				return
			}
			select {
			case <-tick.C:
			case <-stopTrickle:
				return
			}
		}
	}()
	// The workers see the idle ones out in turns of wait, four at a
	// time: five turns for the twenty.
	for i, c := range idle {
		if !closed(c, 6*wait) {
			t.Fatalf("connection %d still open after %v", i, time.Since(start))
		}
	}
	if d := time.Since(start); d > 10*wait {
		t.Errorf("the idle connections took %v to close, want about %v", d, 6*wait)
	}
	// The workers still answer a real client.
	p, err := NewProber(nil, ProberConfig{Mode: ModeCRR, MaxRequest: 512, MaxResponse: 512, Addr: ln.Addr().(*net.TCPAddr), NoWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			r.OfferCRR(c)
		}
	}()
	v := run(t, p, []Plan{{Request: 64, Response: 64, Count: 20}})
	p.Close()
	_ = ln.Close()
	<-accepting
	r.Stop()
	r.Wait()
	checkPoint(t, v, 20)
	if err := r.Err(); err != nil {
		t.Errorf("the workers failed: %v", err)
	}
	if rep := r.Report(ModeCRR); rep.Served != 20 || rep.Connections != crrWorkers+crrQueue+20 {
		t.Errorf("served %d on %d connections, want 20 on %d", rep.Served, rep.Connections, crrWorkers+crrQueue+20)
	}
}

// TestOnSampleSeesEveryCountedTransaction: OnSample is told of each
// counted transaction, with its point's index, and of no warm-up one;
// its RTTs are the ones the point summarises.
func TestOnSampleSeesEveryCountedTransaction(t *testing.T) {
	c, s := udpPair(t)
	r := NewReflector(ReflectorConfig{MaxRequest: 512, MaxResponse: 512})
	r.Go(func() error { return r.ServeUDP(s) })
	defer func() { r.Stop(); r.Wait() }()
	var got [2][]time.Duration
	var last time.Time
	ordered := true
	p, err := NewProber(c, ProberConfig{Mode: ModeUDP, MaxRequest: 512, MaxResponse: 512, OnSample: func(s Sample) {
		got[s.Point] = append(got[s.Point], s.RTT)
		ordered = ordered && !s.Done.Before(last)
		last = s.Done
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out, err := p.Run([]Plan{{Request: 64, Response: 64, Count: 30}, {Request: 200, Response: 64, Count: 20}})
	if err != nil {
		t.Fatal(err)
	}
	for i, pt := range out.Points(0, false) {
		if int64(len(got[i])) != pt.Completed {
			t.Errorf("point %d: %d samples, %d completed", i, len(got[i]), pt.Completed)
		}
		var most time.Duration
		for _, d := range got[i] {
			most = max(most, d)
		}
		if us := float64(most) / 1e3; math.Abs(us-pt.RTT.Max) > 0.01*pt.RTT.Max+1 {
			t.Errorf("point %d: largest sample %.1f µs, the point's max %.1f µs", i, us, pt.RTT.Max)
		}
	}
	if !ordered {
		t.Error("samples out of completion order")
	}
}

// What a transaction's figures cost the prober, between its response
// and its next request (outside the RTT): the five HDR histograms, the
// two signed ones and the flags (bench/RESULTS.md).
func BenchmarkAccumulatorAdd(b *testing.B) {
	a := newAccumulator("", 64, 64)
	now := time.Now()
	t1 := now.UnixNano()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := int64(i & 1023)
		a.add(sample{t1: t1, t2: t1 + 6000 + j, t3: t1 + 7000 + j, t4: t1 + 13000 + 2*j, rx: t1 + 12000 + 2*j,
			tx: t1 + 500, sendNs: 900, rtt: time.Duration(13000 + 2*j), done: now})
	}
}

// The user-space work inside a UDP transaction's RTT, both ends: three
// clock reads (T1, T3, T4), each message's header written and parsed,
// and each receive stamp's control message parsed (bench/RESULTS.md).
func BenchmarkUserSpaceInTheRTT(b *testing.B) {
	buf := make([]byte, 64)
	oob := cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(1_765_000_000_123_456_789, 0, 0))
	var sink int64
	b.ReportAllocs()
	for b.Loop() {
		t1 := time.Now() // client: T1, the request
		req := Header{Kind: KindRequest, Length: 64, Response: 64, Seq: 1, T1: t1.UnixNano()}
		req.Put(buf)
		st := parseStamps(oob) // server: the request's receive stamp, its header, T3, the response
		h, _ := Parse(buf)
		t3 := time.Now().UnixNano()
		resp := Header{Kind: KindResponse, Length: h.Response, Seq: h.Seq, T1: h.T1, T2: st.sw, T3: t3}
		resp.Put(buf)
		st = parseStamps(oob) // client: the response's stamp, its header, T4
		rh, _ := Parse(buf)
		sink += time.Now().UnixNano() - rh.T1 + st.sw
	}
	_ = sink
}
