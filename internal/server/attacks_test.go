package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// Regression tests for what a hostile or broken client did to the server:
// each attack must now be harmless, on loopback, in bounded time.

// liveMemory is the heap and stacks in use after a collection.
func liveMemory() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// rawClient drives the native protocol by hand, as a hostile client would.
type rawClient struct {
	ctl   *net.TCPConn
	token proto.Token
	data  []*net.TCPConn
	udp   []*net.UDPConn
}

func readFrameOf(t *testing.T, c net.Conn, want proto.Type, v any) {
	t.Helper()
	fr, err := proto.ReadFrame(c)
	if err != nil {
		t.Fatalf("waiting for %v: %v", want, err)
	}
	if fr.Type != want {
		var e proto.Error
		_ = fr.Decode(&e)
		t.Fatalf("got %v (%s), want %v", fr.Type, e.Message, want)
	}
	if err := fr.Decode(v); err != nil {
		t.Fatal(err)
	}
}

// startRaw sets a test up and starts it, without reading anything after.
// rcvbuf, when set, shrinks the control connection's receive buffer.
func startRaw(t *testing.T, ts *testServer, s spec.Spec, rcvbuf int) *rawClient {
	t.Helper()
	d := net.Dialer{}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { _ = setRcvbuf(fd, rcvbuf) })
		}
	}
	c, err := d.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rc := &rawClient{ctl: c.(*net.TCPConn)}
	t.Cleanup(rc.close)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := proto.WriteGreeting(c, proto.MagicControl); err != nil {
		t.Fatal(err)
	}
	if _, err := proto.ReadGreeting(c, proto.MagicServer); err != nil {
		t.Fatal(err)
	}
	rc.startTest(t, ts, s)
	return rc
}

// startTest asks for s on the control connection, opens its streams
// with the token the server gives, and starts the test.
func (rc *rawClient) startTest(t *testing.T, ts *testServer, s spec.Spec) {
	t.Helper()
	c := rc.ctl
	writeRequest(t, c, s)
	var acc proto.TestAccept
	readFrameOf(t, c, proto.TypeTestAccept, &acc)
	var err error
	if rc.token, err = proto.ParseToken(acc.Token); err != nil {
		t.Fatal(err)
	}
	if s.Protocol == spec.UDP {
		for id := 1; id <= s.DataConns(); id++ {
			u, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: ts.Addr().IP, Port: ts.Addr().Port})
			if err != nil {
				t.Fatal(err)
			}
			rc.udp = append(rc.udp, u)
			_, _ = u.Write(udpflow.Hello{Token: [16]byte(rc.token), StreamID: uint32(id)}.MarshalHello())
		}
	} else {
		for id := 1; id <= s.DataConns(); id++ {
			dc, err := net.Dial("tcp", ts.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			rc.data = append(rc.data, dc.(*net.TCPConn))
			if _, err := dc.Write(proto.DataHello{Token: rc.token, StreamID: uint32(id)}.Marshal()); err != nil {
				t.Fatal(err)
			}
		}
	}
	var ready proto.StreamsReady
	readFrameOf(t, c, proto.TypeStreamsReady, &ready)
	if err := proto.WriteFrame(c, proto.TypeStart, proto.Start{}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Time{})
}

func (rc *rawClient) close() {
	_ = rc.ctl.Close()
	for _, d := range rc.data {
		_ = d.Close()
	}
	for _, u := range rc.udp {
		_ = u.Close()
	}
}

// A client that sends megabytes of interval frames, which only a server
// sends, is cut off at the first: the frames are never decoded nor queued.
func TestFrameFloodBoundedMemory(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Duration = 20 * time.Second
	rc := startRaw(t, ts, s, 0)
	body := append([]byte(`{"streams":[`), bytes.Repeat([]byte(`{},`), (proto.MaxFrame-64)/3)...)
	body = append(body, `{}]}`...)
	frame := make([]byte, 0, len(body)+5)
	frame = append(frame, byte((len(body)+1)>>24), byte((len(body)+1)>>16), byte((len(body)+1)>>8), byte(len(body)+1), byte(proto.TypeInterval))
	frame = append(frame, body...)
	before := liveMemory()
	_ = rc.ctl.SetWriteDeadline(time.Now().Add(10 * time.Second))
	sent := 0
	for range 40 {
		if _, err := rc.ctl.Write(frame); err != nil {
			break
		}
		sent++
	}
	grown := int64(liveMemory()) - int64(before)
	t.Logf("sent %d frames of 1 MiB; live memory grew %d MiB", sent, grown>>20)
	if grown > 64<<20 {
		t.Fatalf("live memory grew %d MiB under a frame flood, want under 64", grown>>20)
	}
	// The server says why it closed.
	_ = rc.ctl.SetReadDeadline(time.Now().Add(10 * time.Second))
	var reason string
	for {
		fr, err := proto.ReadFrame(rc.ctl)
		if err != nil {
			break
		}
		if fr.Type == proto.TypeError {
			var e proto.Error
			_ = fr.Decode(&e)
			reason = e.Message
			break
		}
	}
	if !strings.Contains(reason, "unexpected interval") {
		t.Fatalf("server's reason = %q, want the protocol error", reason)
	}
	waitFor(t, func() bool { return ts.Stats().Running == 0 })
}

// A second end report used to block the server's reader forever.
func TestSecondEndReportClosesTheTest(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Duration = 20 * time.Second
	rc := startRaw(t, ts, s, 0)
	for range 3 {
		_ = proto.WriteFrame(rc.ctl, proto.TypeEndReport, result.End{})
	}
	waitFor(t, func() bool { return ts.Stats().Running == 0 })
}

// 1,500 connections that announce a 1 MiB frame and stop cost the server
// a few KiB each, not the announced megabyte.
func TestHandshakeFloodBoundedMemory(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.Limits.MaxHandshakes, c.Limits.MaxHandshakesPerClient = 0, 0 // the reader's bound alone
		c.HandshakeTimeout = 20 * time.Second
	})
	hdr := []byte{0, 0x10, 0, 0, byte(proto.TypeTestRequest), '{'}
	before := liveMemory()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 1500 {
		c, err := net.Dial("tcp", ts.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		_ = proto.WriteGreeting(c, proto.MagicControl)
		_, _ = c.Write(hdr)
	}
	// Every connection has had its greeting answered: the server read it.
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := proto.ReadGreeting(c, proto.MagicServer); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return ts.Stats().Handshakes == 1500 })
	grown := int64(liveMemory()) - int64(before)
	t.Logf("1,500 connections in the handshake: live memory grew %d MiB", grown>>20)
	if grown > 64<<20 {
		t.Fatalf("live memory grew %d MiB, want under 64", grown>>20)
	}
}

// Past the handshake limits a connection is closed at once, and the
// connections in the handshake never exceed them.
func TestHandshakeCap(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Limits.MaxHandshakesPerClient = 8 })
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 20 {
		c, err := net.Dial("tcp", ts.Addr().String())
		if err != nil {
			continue // shed before the dial returned
		}
		conns = append(conns, c)
	}
	waitFor(t, func() bool { return ts.Stats().Shed == 12 })
	if h := ts.Stats().Handshakes; h != 8 {
		t.Fatalf("%d connections in the handshake, want the limit of 8", h)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	waitFor(t, func() bool { return ts.Stats().Handshakes == 0 })
	mustRun(t, ts, quickSpec()) // the places came back
}

// A client that starts a test and then neither stops it nor reads: the
// server's clock ends the test at its length plus the drain, and the
// control writes don't wedge on the full socket.
func TestNonReadingClientEndsOnTheServerClock(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Limits.MinKeylessInterval = 0 }) // rows every 10 ms fill the socket sooner

	s := quickSpec()
	s.Duration = time.Second
	s.Streams = 32
	s.Interval = 10 * time.Millisecond
	s.Reverse = true
	start := time.Now()
	_ = startRaw(t, ts, s, 4096)
	// The length, the server clock's grace (1.5 s at most), the last
	// writes' short deadline, and slack for a loaded machine.
	bound := s.Duration + 4*time.Second
	deadline := time.Now().Add(bound + 10*time.Second)
	for ts.Stats().Running != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // bounded poll: the server's running tests, until the deadline above
	}
	took := time.Since(start)
	if ts.Stats().Running != 0 || took > bound {
		t.Fatalf("the test ended after %v, want within %v", took.Round(time.Millisecond), bound)
	}
}

// SIGTERM (here: cancelling Serve) ends a wedged test within the grace
// plus a second.
func TestShutdownWithNonReadingClient(t *testing.T) {
	const grace = 200 * time.Millisecond
	ts := startServer(t, func(c *Config) { c.ShutdownGrace, c.Limits.MinKeylessInterval = grace, 0 })
	s := quickSpec()
	s.Duration = 60 * time.Second
	s.Streams = 32
	s.Interval = 10 * time.Millisecond
	s.Reverse = true
	rc := startRaw(t, ts, s, 4096)
	// Intervals of 32 streams every 10 ms fill the control socket, which
	// the client never reads.
	waitControlFull(t, rc.ctl)
	// Also a connection in its handshake, which must not hold shutdown for
	// its whole timeout.
	hc, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	waitFor(t, func() bool { return ts.Stats().Handshakes >= 1 })
	start := time.Now()
	ts.cancel()
	select {
	case <-ts.served:
		ts.served <- nil
	case <-time.After(grace + 5*time.Second):
		t.Fatal("the server did not stop")
	}
	if took := time.Since(start); took > grace+time.Second {
		t.Fatalf("shutdown took %v, want within the grace (%v) plus 1 s", took.Round(time.Millisecond), grace)
	}
}

// waitControlFull waits (at most 20 s) until the client's control
// socket holds unread data that has stopped growing for half a second
// (50 of the server's intervals): the receive window is shut, and the
// server's next control writes block.
func waitControlFull(t *testing.T, c *net.TCPConn) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	last, since := -1, time.Now()
	for {
		n, err := tcpinfo.Queued(rc)
		if errors.Is(err, tcpinfo.ErrUnsupported) {
			t.Skip("the control socket's backlog (SIOCINQ) is not readable here: no way to see it fill")
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != last {
			last, since = n, time.Now()
		} else if n > 0 && time.Since(since) >= 500*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the control socket never filled: %d bytes unread", n)
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: the socket's unread bytes, until the deadline above
	}
}

// A frozen client of a reverse UDP test: the server stops sending within
// 2 s of the test's end, whatever the client does.
func TestFrozenReverseUDPClientStopsTheSender(t *testing.T) {
	ts := startServer(t, nil)
	s := udpSpec()
	s.Duration = time.Second
	s.Reverse = true
	s.Rate = 50e6
	start := time.Now()
	rc := startRaw(t, ts, s, 0)
	u := rc.udp[0]
	_ = u.SetReadBuffer(1 << 20)
	end := start.Add(s.Duration)
	// Read and drop what arrives until 2 s past the end (a UDP sender
	// cannot tell a frozen receiver from one that reads), then drop what
	// is queued, then count what still arrives.
	buf := make([]byte, 65536)
	for until := end.Add(2 * time.Second); time.Now().Before(until); {
		_ = u.SetReadDeadline(until)
		_, _ = u.Read(buf)
	}
	for i := 0; i < 100000; i++ {
		_ = u.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := u.Read(buf); err != nil {
			break
		}
	}
	late := 0
	quiet := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(quiet) {
		_ = u.SetReadDeadline(quiet)
		if _, err := u.Read(buf); err == nil {
			late++
		}
	}
	if late > 0 {
		t.Fatalf("%d datagrams arrived more than 2 s after the test's end", late)
	}
}

// When the data connections don't arrive, the client hears why, even
// though the set-up's deadline has passed.
func TestRefusalReasonReachesTheClient(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.HandshakeTimeout = 500 * time.Millisecond })
	c := dialControl(t, ts)
	s := quickSpec()
	s.Streams = 2
	writeRequest(t, c, s)
	var acc proto.TestAccept
	readFrameOf(t, c, proto.TypeTestAccept, &acc)
	tok, _ := proto.ParseToken(acc.Token)
	dc, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	_, _ = dc.Write(proto.DataHello{Token: tok, StreamID: 1}.Marshal())
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	fr, err := proto.ReadFrame(c)
	if err != nil {
		t.Fatalf("no reason, just %v", err)
	}
	var e proto.Error
	_ = fr.Decode(&e)
	if fr.Type != proto.TypeError || !strings.Contains(e.Message, "only 1 of 2 data connections") {
		t.Fatalf("got %v %q, want the reason", fr.Type, e.Message)
	}
}

// A client that fails during set-up frees its slot at once, not after
// the set-up's timeout.
func TestSetUpWatchesTheControlConnection(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.HandshakeTimeout = 30 * time.Second })
	for _, proto_ := range []string{spec.TCP, spec.UDP} {
		c := dialControl(t, ts)
		s := quickSpec()
		s.Protocol = proto_
		if proto_ == spec.UDP {
			s = udpSpec()
		}
		writeRequest(t, c, s)
		var acc proto.TestAccept
		readFrameOf(t, c, proto.TypeTestAccept, &acc)
		waitFor(t, func() bool { return ts.Stats().Running == 1 })
		c.Close()
		start := time.Now()
		waitFor(t, func() bool { return ts.Stats().Running == 0 })
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("%s: the slot was held %v after the client left", proto_, took)
		}
	}
}

// -u -B and -u --cport: the UDP streams dial from a UDP local address.
func TestUDPWithBindAndCPort(t *testing.T) {
	ts := startServer(t, nil)
	for _, cport := range []int{0, freeUDPPort(t)} {
		s := udpSpec()
		res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s,
			Bind: "127.0.0.1",
		}, CPort: cport})
		if err != nil {
			t.Fatalf("-u -B 127.0.0.1 --cport %d: %v", cport, err)
		}
		if cport > 0 && !strings.HasSuffix(res.Local.Streams[0].LocalAddr, ":"+strconv.Itoa(cport)) {
			t.Fatalf("stream's local address %s, want port %d", res.Local.Streams[0].LocalAddr, cport)
		}
	}
}

func freeUDPPort(t *testing.T) int {
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	return u.LocalAddr().(*net.UDPAddr).Port
}

// The iperf3 client is refused with iperf3's own error on a server with
// keys, unless the server admits iperf3 clients.
func TestIperf3RefusedWithKeys(t *testing.T) {
	bin := iperf3bin.Need(t)
	keys := testKeys()
	for _, open := range []bool{false, true} {
		ts := startServer(t, func(c *Config) { c.Keys = keys; c.Iperf3Open = open })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, bin, "-c", "127.0.0.1", "-p", strconv.Itoa(ts.Addr().Port), "-t", "1").CombinedOutput()
		cancel()
		switch {
		case !open && (err == nil || !strings.Contains(string(out), "authorization failed")):
			t.Fatalf("iperf3 against a server with keys: err %v, output %s", err, out)
		case open && err != nil:
			t.Fatalf("iperf3 with --iperf3-open: %v\n%s", err, out)
		}
	}
}
