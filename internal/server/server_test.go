package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// testServer runs a server on loopback for one test and stops it after.
type testServer struct {
	*Server
	cancel  context.CancelFunc
	served  chan error
	mu      sync.Mutex
	results []*result.Result
}

func startServer(t *testing.T, mutate func(*Config)) *testServer {
	t.Helper()
	ts := &testServer{served: make(chan error, 1)}
	cfg := Config{
		Bind: "127.0.0.1", Limits: DefaultLimits(), HandshakeTimeout: 2 * time.Second,
		ShutdownGrace: 5 * time.Second,
		Logger:        slog.New(slog.DiscardHandler),
		OnResult: func(r *result.Result) {
			ts.mu.Lock()
			ts.results = append(ts.results, r)
			ts.mu.Unlock()
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	ts.Server = New(cfg)
	if err := ts.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.served <- ts.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.served:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop")
		}
	})
	return ts
}

func (ts *testServer) run(t *testing.T, s spec.Spec) (*result.Result, error) {
	t.Helper()
	return session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s,
	}})
}

func quickSpec() spec.Spec {
	s := spec.Default()
	s.Duration = time.Second
	s.Interval = 250 * time.Millisecond
	return s
}

func mustRun(t *testing.T, ts *testServer, s spec.Spec) *result.Result {
	t.Helper()
	res, err := ts.run(t, s)
	if err != nil {
		t.Fatalf("test failed: %v", err)
	}
	return res
}

func TestBytesReceivedEqualBytesSent(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Duration = 0
	s.Bytes = 10 << 20
	for _, mode := range []string{"forward", "reverse", "bidir"} {
		t.Run(mode, func(t *testing.T) {
			s := s
			s.Reverse = mode == "reverse"
			s.Bidir = mode == "bidir"
			res := mustRun(t, ts, s)
			dirs := res.Directions()
			if want := map[string]int{"forward": 1, "reverse": 1, "bidir": 2}[mode]; len(dirs) != want {
				t.Fatalf("%d directions, want %d", len(dirs), want)
			}
			for _, d := range dirs {
				if d.Sent.Bytes != s.Bytes || d.Received.Bytes != s.Bytes {
					t.Errorf("%s: sent %d, received %d, want both %d", d.Label(), d.Sent.Bytes, d.Received.Bytes, s.Bytes)
				}
			}
		})
	}
}

func TestParallelStreamsSumToTotal(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Streams = 4
	res := mustRun(t, ts, s)
	flows := res.Flows()
	if len(flows) != 4 {
		t.Fatalf("%d flows, want 4", len(flows))
	}
	var sum int64
	for _, f := range flows {
		if f.Sent == nil || f.Received == nil || f.Received.Bytes == 0 {
			t.Fatalf("flow %d incomplete: %+v", f.ID, f)
		}
		if f.Sent.Bytes != f.Received.Bytes {
			t.Errorf("flow %d: sent %d, received %d", f.ID, f.Sent.Bytes, f.Received.Bytes)
		}
		sum += f.Received.Bytes
	}
	if d := res.Directions()[0]; d.Received.Bytes != sum || d.Received.Streams != 4 {
		t.Errorf("sum %d over %d streams, flows add to %d over 4", d.Received.Bytes, d.Received.Streams, sum)
	}
}

func TestReverseMakesTheServerSend(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Reverse = true
	res := mustRun(t, ts, s)
	for _, st := range res.Local.Streams {
		if st.Sender {
			t.Errorf("client stream %d sent in reverse mode", st.ID)
		}
		if st.Bytes == 0 {
			t.Errorf("client stream %d received nothing", st.ID)
		}
	}
	for _, st := range res.Remote.Streams {
		if !st.Sender || st.Bytes == 0 {
			t.Errorf("server stream %d: sender=%v bytes=%d", st.ID, st.Sender, st.Bytes)
		}
		if st.TCPInfo == nil || st.TCPInfo.BytesAcked == 0 {
			t.Errorf("server stream %d: no TCP_INFO from the sending end", st.ID)
		}
	}
}

func sumIntervals(ivs []result.Interval, id int) int64 {
	var n int64
	for _, iv := range ivs {
		if iv.Omitted {
			continue
		}
		for _, s := range iv.Streams {
			if s.ID == id {
				n += s.Bytes
			}
		}
	}
	return n
}

func TestIntervalsAddUpToTotal(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Streams = 2
	s.Omit = 250 * time.Millisecond
	s.Duration = 1250 * time.Millisecond
	res := mustRun(t, ts, s)
	if len(res.Local.Intervals) < 4 || len(res.Remote.Intervals) < 4 {
		t.Fatalf("intervals: local %d, remote %d, want at least 4 each", len(res.Local.Intervals), len(res.Remote.Intervals))
	}
	if !res.Local.Intervals[0].Omitted || res.Local.Intervals[1].Omitted {
		t.Errorf("only the first interval should be omitted: %+v", res.Local.Intervals[:2])
	}
	for _, end := range []result.End{res.Local, res.Remote} {
		for _, st := range end.Streams {
			if got := sumIntervals(end.Intervals, st.ID); got != st.Bytes {
				t.Errorf("%s stream %d: intervals add to %d, total %d", end.Role, st.ID, got, st.Bytes)
			}
			// The total counts from when the omitted start's end was read:
			// at 0.25 s, or a little later on a loaded machine, where the
			// omitted row ends too.
			if omitEnd := end.Intervals[0].End; st.Start != omitEnd || st.Start < 0.25 {
				t.Errorf("%s stream %d starts at %v, want the end of the omitted row, %v (-O 0.25 s)", end.Role, st.ID, st.Start, omitEnd)
			}
		}
	}
	rows := res.IntervalRows()
	for _, row := range rows[:len(rows)-1] {
		for _, f := range row.Flows {
			if f.Sent == nil || f.Received == nil {
				t.Errorf("row %d flow %d lacks a side", row.Index, f.ID)
			}
		}
	}
}

func TestTwoClientsAtOnce(t *testing.T) {
	ts := startServer(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	results := make([]*result.Result, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := quickSpec()
			s.Reverse = i == 1
			results[i], errs[i] = ts.run(t, s)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		if d := results[i].Directions()[0]; d.Received.Bytes == 0 || d.Sent.Bytes != d.Received.Bytes {
			t.Errorf("client %d: sent %d, received %d", i, d.Sent.Bytes, d.Received.Bytes)
		}
	}
	if results[0].Token == results[1].Token {
		t.Error("two tests share a token")
	}
	// The server records a test once the client's final report is in,
	// which can be just after the client returns.
	waitFor(t, func() bool { return ts.Stats().TestsFinished == 2 })
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, r := range ts.results {
		if len(r.Remote.Streams) == 0 || r.Remote.Role != result.RoleClient {
			t.Errorf("server's record lacks the client's report: %+v", r.Remote)
		}
	}
}

func TestIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
	ts := startServer(t, func(c *Config) { c.Bind = "::1" })
	res := mustRun(t, ts, quickSpec())
	if !strings.HasPrefix(res.Local.Streams[0].LocalAddr, "[::1]") {
		t.Errorf("local address %s is not IPv6 loopback", res.Local.Streams[0].LocalAddr)
	}
}

func TestLimitsRefuseWithReason(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.Limits.MaxStreams = 2
		c.Limits.MaxDuration = 5 * time.Second
	})
	tests := []struct {
		name string
		mod  func(*spec.Spec)
		want string
	}{
		{"streams", func(s *spec.Spec) { s.Streams = 3 }, "--max-streams"},
		{"bidir streams", func(s *spec.Spec) { s.Streams = 2; s.Bidir = true }, "--max-streams"},
		{"duration", func(s *spec.Spec) { s.Duration = time.Minute }, "--max-duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := quickSpec()
			tc.mod(&s)
			_, err := ts.run(t, s)
			if !errors.Is(err, control.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal naming %s", err, tc.want)
			}
		})
	}
	// The server counts a refusal once its side has closed, which can be
	// just after the client has read the reason.
	waitFor(t, func() bool { return ts.Stats().TestsRefused >= int64(len(tests)) })
	if st := ts.Stats(); st.TestsRefused != int64(len(tests)) {
		t.Errorf("refused %d, want %d", st.TestsRefused, len(tests))
	}
}

func TestMaxTestsRefusesWhileBusy(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Limits.MaxTests = 1 })
	// Hold the only slot with a test whose client never starts it.
	hold := dialControl(t, ts)
	writeRequest(t, hold, quickSpec())
	if fr, err := proto.ReadFrame(hold); err != nil || fr.Type != proto.TypeTestAccept {
		t.Fatalf("first test not accepted: %v %v", fr.Type, err)
	}
	_, err := ts.run(t, quickSpec())
	if !errors.Is(err, control.ErrRefused) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("err = %v, want a busy refusal", err)
	}
	hold.Close()
	// The slot frees once the held test gives up; then tests run again.
	waitFor(t, func() bool { return ts.Stats().Running == 0 })
	mustRun(t, ts, quickSpec())
}

func TestShutdownAbortsRunningTests(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ShutdownGrace = 200 * time.Millisecond })
	s := quickSpec()
	s.Duration = 30 * time.Second
	errc := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		_, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s,
		}, Observer: startedObserver(started)})
		errc <- err
	}()
	select { // shut down once data flows, not while streams still connect
	case <-started:
	case err := <-errc:
		t.Fatalf("test ended before it started: %v", err)
	}
	ts.cancel()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "shutting down") {
			t.Fatalf("client err = %v, want the server's shutdown reason", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("client did not end after the server shut down")
	}
	if err := <-ts.served; err != nil {
		t.Fatal(err)
	}
	ts.served <- nil // for the cleanup
	if st := ts.Stats(); st.TestsAborted != 1 {
		t.Errorf("aborted %d tests, want 1", st.TestsAborted)
	}
}

func TestOnceServesOneTest(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Once = true })
	mustRun(t, ts, quickSpec())
	select {
	case err := <-ts.served:
		if err != nil {
			t.Fatal(err)
		}
		ts.served <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("server with --once kept serving")
	}
}

// waitFor polls a condition that another goroutine makes true, bounded.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(5 * time.Millisecond) // bounded poll: the condition, until the deadline above
	}
}

func TestSocketOptionsReachBothEnds(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Duration = 300 * time.Millisecond
	s.Window = 200_000
	s.MSS = 1000
	s.Congestion = "reno"
	s.NoDelay = true
	res := mustRun(t, ts, s)
	for _, end := range []result.End{res.Local, res.Remote} {
		for _, st := range end.Streams {
			sock := st.Socket
			if sock.SndBufRequested != 200_000 || sock.RcvBufRequested != 200_000 {
				t.Errorf("%s: requested %d/%d, want 200000", end.Role, sock.SndBufRequested, sock.RcvBufRequested)
			}
			// Linux doubles the request (unless rmem_max/wmem_max is lower).
			if sock.SndBufGranted < 200_000 || sock.RcvBufGranted < 200_000 {
				t.Errorf("%s: granted %d/%d, want at least the request", end.Role, sock.SndBufGranted, sock.RcvBufGranted)
			}
			if sock.MSS == 0 || sock.MSS > 1000 {
				t.Errorf("%s: MSS %d, want 1..1000", end.Role, sock.MSS)
			}
			if sock.Congestion != "reno" {
				t.Errorf("%s: congestion %q, want reno", end.Role, sock.Congestion)
			}
		}
	}
}

func TestUnknownCongestionIsRefused(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Congestion = "nosuchalgo"
	_, err := ts.run(t, s)
	if err == nil || !strings.Contains(err.Error(), "nosuchalgo") {
		t.Fatalf("err = %v, want it to name the algorithm", err)
	}
}

// startedObserver closes ch when the test's streams are all up.
type startedObserver chan struct{}

func (o startedObserver) Started(*result.Result)                      { close(o) }
func (o startedObserver) Interval(*result.Result, result.IntervalRow) {}
