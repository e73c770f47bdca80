package iperf3

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/iperf3/iperf3wire"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// serveNextOK runs a short iperf3 client against s and checks the test.
func serveNextOK(t *testing.T, s *testServer) {
	t.Helper()
	doc := runIperf3Client(t, s, "-t", "1")
	checkIperf3Client(t, s.next(t), doc)
}

func TestServeClientKilledMidTest(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-t", "10"}, {"-t", "10", "-R", "-P", "2"}, {"-t", "10", "-u", "-b", "5M"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, nil)
			p := startIperf3(t, 30*time.Second, append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(s.port), "--forceflush"}, args...)...)
			p.waitOutput(t, " sec ", 10*time.Second) // its first interval line: the test is under way
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
			start := time.Now()
			sr := s.next(t)
			if sr.err == nil || sr.res == nil || sr.res.Error == "" {
				t.Fatalf("killed client: result %v, error %v; want a partial result with an error", sr.res != nil, sr.err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the server took %v to notice", d)
			}
			if s.reg.Running() != 0 {
				t.Errorf("%d tests still registered", s.reg.Running())
			}
			serveNextOK(t, s)
		})
	}
}

func TestServeMalformedCookie(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, nil)
	for _, bad := range []string{
		"abcd" + strings.Repeat("!", 33),             // cookie characters, then not
		"abcdefghijklmnopqrstuvwxyz234567abcd" + "x", // no NUL
		"abcd", // hangs up after 4 bytes
	} {
		c, err := net.Dial("tcp", s.addr())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(bad))
		if len(bad) == CookieLen {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := c.Read(make([]byte, 8)); err == nil {
				t.Errorf("cookie %q: the server answered %d bytes", bad, n)
			}
		}
		_ = c.Close()
	}
	for range 2 { // the 37-byte ones went to Serve
		if sr := s.next(t); sr.res != nil || sr.err == nil {
			t.Errorf("malformed cookie: result %v, error %v", sr.res, sr.err)
		}
	}
	serveNextOK(t, s)
}

func TestServeHugeJSONLength(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, nil)
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cookie := NewCookie()
	_, _ = c.Write(cookie[:])
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if st, err := ReadState(c); err != nil || st != ParamExchange {
		t.Fatalf("got %v, %v; want PARAM_EXCHANGE", st, err)
	}
	_, _ = c.Write([]byte{0xff, 0xff, 0xff, 0xff, '{'})
	sr := s.next(t)
	if sr.res != nil || !errors.Is(sr.err, ErrMessageTooBig) {
		t.Fatalf("length 0xffffffff: result %v, error %v; want ErrMessageTooBig", sr.res, sr.err)
	}
	serveNextOK(t, s)
}

func TestServeAdmitRefuses(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, func(c *ServeConfig) {
		c.Admit = func(peer net.Addr, sp spec.Spec) (func(), error) {
			if sp.Streams > 2 {
				return nil, errors.New("too many streams")
			}
			return func() {}, nil
		}
	})
	p := startIperf3(t, 20*time.Second, "-c", "127.0.0.1", "-p", strconv.Itoa(s.port), "-t", "1", "-P", "4")
	<-p.done
	if out := p.stdout.String() + p.stderr.String(); !strings.Contains(out, "busy") {
		t.Errorf("refused iperf3 client said %q; want the busy message", out)
	}
	if sr := s.next(t); sr.res != nil || sr.err == nil {
		t.Errorf("refused test: result %v, error %v", sr.res, sr.err)
	}
	serveNextOK(t, s)
}

// A control connection that repeats a running test's cookie is refused
// the way iperf3 refuses a stray connection.
func TestServeDuplicateCookie(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, nil)
	p := startIperf3(t, 20*time.Second, "-c", "127.0.0.1", "-p", strconv.Itoa(s.port), "-t", "2", "-J")
	// The test's cookie, once its data connections are taken (past
	// CREATE_STREAMS): the same cookie again is then a second control
	// connection, not a stream.
	var cookie Cookie
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.reg.mu.Lock()
		for c, e := range s.reg.tests {
			if e.want > 0 && !e.collecting {
				cookie = c
			}
		}
		s.reg.mu.Unlock()
		if cookie != (Cookie{}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the iperf3 test never took its data connections")
		}
		time.Sleep(10 * time.Millisecond) // bounded poll: the registry, until the deadline above
	}
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write(cookie[:])
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if st, err := ReadState(c); err != nil || st != AccessDenied {
		t.Errorf("duplicate cookie: got %v, %v; want ACCESS_DENIED", st, err)
	}
	sr1, sr2 := s.next(t), s.next(t)
	if (sr1.res == nil) == (sr2.res == nil) {
		t.Fatalf("want one refusal and one test: %v / %v", sr1.err, sr2.err)
	}
	if sr1.res == nil {
		sr1 = sr2
	}
	checkIperf3Client(t, sr1, p.json(t))
}

func TestClientBusyServer(t *testing.T) {
	t.Parallel()
	srv, port := startIperf3Server(t)
	busy := startIperf3(t, 20*time.Second, "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "2", "--forceflush")
	busy.waitOutput(t, " connected to ", 10*time.Second) // its stream is up: the server is busy
	cfg := ClientConfig{Host: "127.0.0.1", Port: port, Spec: clientSpec(nil)}
	_, err := RunClient(context.Background(), cfg)
	want := "iperf3 server 127.0.0.1:" + strconv.Itoa(port) + " is busy running another test"
	if !errors.Is(err, ErrBusy) || err.Error() != want {
		t.Fatalf("busy server: %v; want %q", err, want)
	}
	// The native greeting gets ACCESS_DENIED at once from a busy server.
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	_ = proto.WriteGreeting(c, proto.MagicControl)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 8)
	n, _ := c.Read(b)
	_ = c.Close()
	if !iperf3wire.LooksLikeIperf3Reply(b[:n]) {
		t.Errorf("busy iperf3 answered the native greeting with %q; LooksLikeIperf3Reply says no", b[:n])
	}
	// The one-shot server is still busy; with RetryBusy we wait for it.
	// (It exits after its test, so retry against a fresh -1 server is not
	// possible: use a persistent one.)
	_ = srv
	<-busy.done
}

func TestClientRetryBusy(t *testing.T) {
	t.Parallel()
	needIperf3(t)
	port := loopback.FreePort(t)
	srv := startIperf3(t, 30*time.Second, "-s", "-p", strconv.Itoa(port)) // not one-shot
	for deadline := time.Now().Add(listenWait); !listening(port); {
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 server did not listen on %d", port)
		}
		time.Sleep(10 * time.Millisecond) // bounded poll: the port iperf3 binds, until the deadline above
	}
	_ = srv
	busy := startIperf3(t, 20*time.Second, "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "2", "--forceflush")
	busy.waitOutput(t, " connected to ", 10*time.Second) // its stream is up: the server is busy
	h := retryLog{retries: make(chan struct{}, 64)}
	res, err := RunClient(context.Background(), ClientConfig{Host: "127.0.0.1", Port: port, Spec: clientSpec(nil), RetryBusy: 10 * time.Second,
		Logger: slog.New(h)})
	if err != nil {
		t.Fatalf("RunClient with RetryBusy: %v", err)
	}
	if len(h.retries) == 0 {
		t.Error("the client never met the busy server")
	}
	// One test at a time: the client's ran after the busy one ended.
	select {
	case <-busy.done:
	default:
		t.Error("the client's test ended while the busy client still ran")
	}
	if res.Error != "" || len(res.Flows()) != 1 {
		t.Errorf("result: %s, %d flows", res.Error, len(res.Flows()))
	}
	<-busy.done
}

// The native client's greeting, then silence: an idle iperf3 server
// waits for the rest of its cookie, and RunClientOn completes it on the
// same connection, so even a one-shot server runs the test.
func TestClientOnNativeGreeting(t *testing.T) {
	t.Parallel()
	srv, port := startIperf3Server(t)
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	greeting := make([]byte, 0, proto.GreetingLen)
	w := &appendWriter{&greeting}
	_ = proto.WriteGreeting(w, proto.MagicControl)
	if _, err := c.Write(greeting); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(iperf3wire.ProbeWait(0)))
	n, err := c.Read(make([]byte, 8))
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("idle iperf3 server answered the greeting: %d bytes, %v", n, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	res, err := RunClientOn(context.Background(), c.(*net.TCPConn), greeting, ClientConfig{Spec: clientSpec(func(s *spec.Spec) { s.Streams = 2 })})
	if err != nil {
		t.Fatalf("RunClientOn: %v", err)
	}
	checkAgainstIperf3Server(t, res, srv.json(t))
}

func TestClientOnNotIperf3(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.ReadFull(c, make([]byte, CookieLen))
		_ = proto.WriteGreeting(c, proto.MagicServer) // a late wireperf answer
		holdUntilHangUp(c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // the fake server holds its end until this hang-up
	_, err = RunClientOn(context.Background(), c.(*net.TCPConn), []byte("WPRC\x00\x01\x00\x00"), ClientConfig{Spec: clientSpec(nil), ConnectTimeout: 2 * time.Second})
	if !errors.Is(err, ErrNotIperf3) {
		t.Fatalf("got %v; want ErrNotIperf3", err)
	}
}

// A server that announces a 4 GiB results message is refused unread.
func TestClientHugeResults(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go fakeServer(ln, func(c net.Conn) {
		_ = WriteState(c, ExchangeResults)
		_, _ = ReadMessage(c, MaxMessage)
		_, _ = c.Write([]byte{0xff, 0xff, 0xff, 0xff})
		holdUntilHangUp(c)
	})
	host, port := netsetup.SplitHostPort(ln.Addr().String())
	_, err = RunClient(context.Background(), ClientConfig{Host: host, Port: port, Spec: clientSpec(nil), ConnectTimeout: 3 * time.Second})
	if !errors.Is(err, ErrMessageTooBig) {
		t.Fatalf("got %v; want ErrMessageTooBig", err)
	}
}

// fakeServer plays an iperf3 server for one TCP test with one stream up
// to TEST_END, then hands over to end.
func fakeServer(ln net.Listener, end func(net.Conn)) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	var cookie [CookieLen]byte
	_, _ = io.ReadFull(c, cookie[:])
	_ = WriteState(c, ParamExchange)
	var p Params
	_ = ReadJSON(c, MaxMessage, &p)
	_ = WriteState(c, CreateStreams)
	d, err := ln.Accept()
	if err != nil {
		return
	}
	defer d.Close()
	_, _ = io.ReadFull(d, cookie[:])
	go func() { _, _ = io.Copy(io.Discard, d) }()
	_ = WriteState(c, TestStart)
	_ = WriteState(c, TestRunning)
	if st, err := ReadState(c); err != nil || st != TestEnd {
		return
	}
	end(c)
}

// holdUntilHangUp keeps a fake server's connection open until the
// client hangs up (at most 10 s), so that what the client decides is
// from what it read, not from an early close.
func holdUntilHangUp(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.Copy(io.Discard, c)
}

type appendWriter struct{ b *[]byte }

func (w *appendWriter) Write(p []byte) (int, error) { *w.b = append(*w.b, p...); return len(p), nil }

// retryLog counts the client's "busy; retrying" lines.
type retryLog struct{ retries chan struct{} }

func (h retryLog) Enabled(context.Context, slog.Level) bool { return true }
func (h retryLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "busy; retrying") {
		h.retries <- struct{}{}
	}
	return nil
}
func (h retryLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h retryLog) WithGroup(string) slog.Handler      { return h }

// Between two tests iperf3 closes its listener and opens a new one; a
// retrying client that meets "connection refused" right after "busy" must
// keep retrying, not give up.
func TestClientRetryBusyThroughARefusal(t *testing.T) {
	t.Parallel()
	needIperf3(t)
	port := loopback.FreePort(t)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	go func() { // one "busy" answer, as iperf3 gives it, then no listener
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		_, _ = io.ReadFull(c, make([]byte, CookieLen))
		_, _ = c.Write([]byte{0xff})
		c.Close()
	}()
	h := retryLog{retries: make(chan struct{}, 16)}
	type out struct {
		res *result.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := RunClient(context.Background(), ClientConfig{Host: "127.0.0.1", Port: port, Spec: clientSpec(nil),
			RetryBusy: 20 * time.Second, Logger: slog.New(h)})
		done <- out{res, err}
	}()
	for i := range 2 { // the busy answer, then the refusal
		select {
		case <-h.retries:
		case o := <-done:
			t.Fatalf("the client gave up after %d retries: %v", i, o.err)
		}
	}
	startIperf3(t, 30*time.Second, "-s", "-1", "-p", strconv.Itoa(port))
	o := <-done
	if o.err != nil || o.res == nil || len(o.res.Flows()) != 1 {
		t.Fatalf("after the refusal: %v", o.err)
	}
}
