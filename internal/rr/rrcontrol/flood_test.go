package rrcontrol_test

import (
	"context"
	"net"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// connectRaw has a test admitted, as a client that goes its own way
// from there would: the control connection, closed when the test ends.
func connectRaw(t *testing.T, port int, s spec.Spec) *control.Control {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctl, err := control.Connect(ctx, control.ClientConfig{Host: "127.0.0.1", Port: port, Spec: s, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Close)
	return ctl
}

// startRawRR has a crr test admitted and started, and returns its
// control connection and token: what a hostile client needs to open data
// connections that never send a request.
func startRawRR(t *testing.T, port int, s spec.Spec) (*control.Control, proto.Token) {
	t.Helper()
	ctl := connectRaw(t, port, s)
	tok, err := proto.ParseToken(ctl.Accept().Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.ReadReady(&proto.StreamsReady{}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Send(proto.TypeStart, proto.Start{}); err != nil {
		t.Fatal(err)
	}
	return ctl, tok
}

// threadsCreated is how many OS threads the process has started: what Go
// counts against its limit of 10,000.
func threadsCreated() int { return pprof.Lookup("threadcreate").Count() }

// A crr test whose client opens data connections that say hello and
// never send a request: each used to hold an OS thread of the server for
// 10 s, and some 11,000 of them ended the process ("program exceeds
// 10000-thread limit"). The server must answer with a bounded set of
// threads, turn the excess away, and go on serving.
func TestCRRFloodKeepsTheServerAlive(t *testing.T) {
	const (
		flood      = 1500 // connections held open at once
		maxThreads = 200
	)
	srv := startServer(t)
	s := rrSpec(spec.RRCRR, 64)
	s.RRCount, s.Duration = 0, time.Minute
	ctl, tok := startRawRR(t, srv.Addr().Port, s)
	ev := ctl.Listen()
	hello := proto.DataHello{Token: tok, StreamID: 1}.Marshal()
	before := threadsCreated()
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: srv.Addr().Port}
	var open []*net.TCPConn
	defer func() {
		for _, c := range open {
			_ = c.Close()
		}
	}()
	in, refused := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for i := range flood {
		if time.Now().After(deadline) {
			t.Fatalf("the flood took over 20 s (%d connections)", i)
		}
		// A connection the server (or its kernel) turns away is what a
		// flood should meet; only the ones that get in load the server.
		c, err := net.DialTCP("tcp", nil, addr)
		if err != nil {
			refused++
			continue
		}
		open = append(open, c)
		if _, err := c.Write(hello); err != nil {
			refused++
			continue
		}
		in++
		// Stop as soon as the server has gone over: the old code would
		// go on to exhaust the process's threads and kill the test binary.
		if n := threadsCreated() - before; n > maxThreads {
			t.Fatalf("after %d idle crr connections the process started %d threads, want under %d", i+1, n, maxThreads)
		}
	}
	if in < flood/2 {
		t.Fatalf("only %d of %d flood connections got in (%d turned away): too few to load the server", in, flood, refused)
	}
	// The server still answers: the test's own control connection ends
	// the test cleanly, and a crr test of a real client runs alongside.
	res := runRR(t, srv, rrSpec(spec.RRCRR, 64))
	if p := res.Local.RR.Points[0]; p.Completed != 300 || p.Errors != 0 {
		t.Errorf("a crr test during the flood: %d completed, %d errors", p.Completed, p.Errors)
	}
	if err := ctl.Send(proto.TypeStop, proto.Stop{Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	var end result.End
	select {
	case end = <-ev.End:
	case err := <-ev.Lost:
		t.Fatalf("waiting for the server's report: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server's report did not come within 10 s")
	}
	if end.RR == nil || end.RR.Connections >= flood {
		t.Fatalf("the flooded test answered every idle connection instead of turning the excess away: %+v", end.RR)
	}
	if n := threadsCreated() - before; n > maxThreads {
		t.Errorf("the process started %d threads during the flood, want under %d", n, maxThreads)
	}
	t.Logf("%d idle crr connections (%d turned away at connect): %d threads started; flooded test served %d, %d connections",
		flood, refused, threadsCreated()-before, end.RR.Served, end.RR.Connections)
}
