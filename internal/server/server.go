// Package server is wireperf's server: one listening port that runs many
// tests at once, each isolated by its token, under limits, and that shuts
// down cleanly.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmux"
	"github.com/wireperf/wireperf/internal/units"
)

// Config is a server's configuration.
type Config struct {
	Bind string // address to listen on; "" for every address, IPv4 and IPv6
	Port int
	Once bool // serve one test, then stop
	// MPTCP is -m: the listener accepts MPTCP connections beside TCP
	// ones whatever GODEBUG says (Go's listeners do by default).
	MPTCP  bool
	Limits Limits
	// ShutdownGrace is how long running tests may go on after a shutdown
	// request before they are aborted.
	ShutdownGrace time.Duration
	// HandshakeTimeout bounds a connection's silence before its test runs.
	HandshakeTimeout time.Duration
	Logger           *slog.Logger
	// OnResult receives the server's record of every test that ran.
	OnResult func(*result.Result)
	// OnTest receives the same record with the server's number for the
	// test and its client's address, for the server's own report.
	OnTest func(Finished)
	// Live, when set, gives each bulk test an observer that sees it as it
	// runs (its start, then each of the server's rows), for the server's
	// own report; a nil observer watches nothing. id and peer are those
	// its Finished will carry.
	Live func(id int64, peer net.Addr) result.Observer
	// ServerOutput renders a test for a client that asks for
	// --get-server-output, text in the unit of the client's -f when it
	// says one (a native client; the zero Format otherwise); nil sends
	// none.
	ServerOutput func(r *result.Result, format units.Format) ([]byte, bool)
	// Keys, when set, are the users who may run tests; every native
	// client must prove it holds one of the keys.
	Keys auth.Keys
	// Iperf3Open admits iperf3 clients, which cannot present a key, on a
	// server with Keys.
	Iperf3Open bool
	// Iperf3Auth, when set, admits only iperf3 clients with iperf3's
	// credentials, beside native clients with Keys.
	Iperf3Auth *iperf3.ServerAuth
	// ACL admits clients by address.
	ACL auth.ACL
	// TLS, when set, is required on native control connections.
	TLS *tls.Config
	// StatusInterval, when set, logs the server's counters and its
	// goroutines that often.
	StatusInterval time.Duration
	// Agent, when set, also serves controllers of group tests (--agent).
	Agent *agent.Agent
	// IdleTimeout, with Once, stops a server that has had no connection
	// open for this long (iperf3's --idle-timeout with -1). Without Once
	// it does nothing: iperf3 restarts its one test's state then, and
	// this server keeps none between connections.
	IdleTimeout time.Duration
}

// Stats count what the server saw; tests read them.
type Stats struct {
	TestsAccepted int64
	TestsRefused  int64
	TestsFinished int64
	TestsAborted  int64
	BadControl    int64 // control connections that broke the protocol
	ForeignData   int64 // data connections with an unknown token
	UnknownProto  int64 // connections that spoke neither wireperf nor anything we know
	UnmatchedUDP  int64 // datagrams on the UDP port that no test expected
	Shed          int64 // connections closed at once, or a silent one closed for a newcomer: too many in the handshake
	Denied        int64 // connections from an address the ACL refuses (counted at accept)
	Throttled     int64 // connections closed at accept: their source's wrong keys emptied its bucket
	AuthFailed    int64 // control connections that failed authentication
	Running       int
	Handshakes    int // connections not yet part of a test (an iperf3 control connection counts until its test ends)
}

// Finished is a test the server ran, as its report names it.
type Finished struct {
	ID     int64    // the server's count of the tests it ran, from 1, in the order they started
	Peer   net.Addr // the client's control connection
	Result *result.Result
}

// Server serves tests.
type Server struct {
	cfg Config
	log *slog.Logger
	reg *registry
	ln  net.Listener
	udp *udpmux.Mux
	ip3 *iperf3.Registry

	hs *gate

	// deniedHS holds the few connections refused by the address lists
	// that are told why; authLimit slows wrong keys per source.
	deniedHS  *gate
	authLimit *auth.FailureLimiter

	stats struct {
		testIDs, accepted, refused, finished, aborted, badControl, foreign, unknown, shed, denied, authFailed, throttled atomic.Int64
	}
	wg sync.WaitGroup
}

// DefaultShutdownGrace is how long running tests may finish after the
// context ends unless Config.ShutdownGrace says.
const DefaultShutdownGrace = 5 * time.Second

// New makes a server; Listen binds it.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.Agent != nil && cfg.Agent.Admit == nil {
		cfg.Agent.Admit = cfg.Limits.check // an agent's test is bounded as a served one
	}
	s := &Server{cfg: cfg, log: cfg.Logger, reg: newRegistry(cfg.Limits, cfg.Keys != nil, nil), ip3: iperf3.NewRegistry(),
		hs:       newGate(cfg.Limits.MaxHandshakes, cfg.Limits.MaxHandshakesPerClient),
		deniedHS: newGate(deniedHandshakes, deniedHandshakesPerClient), authLimit: auth.NewFailureLimiter()}
	if cfg.Agent != nil && cfg.Agent.AuthFailed == nil {
		cfg.Agent.AuthFailed = s.authFailed
		s.cfg.Agent = cfg.Agent
	}
	return s
}

// Listen binds the port. Port 0 picks a free one; Addr tells which.
func (s *Server) Listen() error {
	addr := net.JoinHostPort(s.cfg.Bind, strconv.Itoa(s.cfg.Port))
	ln, err := netsetup.Listen(context.Background(), addr, s.cfg.MPTCP)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	// UDP tests use the same port number, as iperf3's do.
	port := ln.Addr().(*net.TCPAddr).Port
	mux, err := udpmux.Listen(net.JoinHostPort(s.cfg.Bind, strconv.Itoa(port)))
	if err != nil {
		_ = ln.Close()
		return err
	}
	s.ln, s.udp = ln, mux
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() *net.TCPAddr { return s.ln.Addr().(*net.TCPAddr) }

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{
		TestsAccepted: s.stats.accepted.Load(),
		TestsRefused:  s.stats.refused.Load(),
		TestsFinished: s.stats.finished.Load(),
		TestsAborted:  s.stats.aborted.Load(),
		BadControl:    s.stats.badControl.Load(),
		ForeignData:   s.stats.foreign.Load(),
		UnknownProto:  s.stats.unknown.Load(),
		UnmatchedUDP:  s.udp.Unmatched(),
		Shed:          s.stats.shed.Load(),
		Denied:        s.stats.denied.Load(),
		Throttled:     s.stats.throttled.Load(),
		AuthFailed:    s.stats.authFailed.Load(),
		Running:       s.reg.running(),
		Handshakes:    s.hs.count(),
	}
}

// Serve accepts connections until ctx is cancelled (or, with Once, until
// one test has run). Then it stops accepting, lets running tests finish
// for ShutdownGrace, aborts the rest, and reports what it did.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	s.log.Info("server listening", "addr", s.ln.Addr().String(),
		"max_tests", s.cfg.Limits.MaxTests, "max_streams", s.cfg.Limits.MaxStreams, "max_duration", s.cfg.Limits.MaxDuration,
		"max_memory", s.cfg.Limits.MaxMemory, "auth", s.cfg.Keys != nil, "iperf3_auth", s.cfg.Iperf3Auth != nil, "tls", s.cfg.TLS != nil)
	acceptCtx, stopAccepting := context.WithCancel(ctx)
	defer stopAccepting()
	abortCtx, abortTests := context.WithCancel(context.Background())
	defer abortTests()
	go func() {
		<-acceptCtx.Done()
		_ = s.ln.Close()
	}()
	defer s.udp.Close()
	if s.cfg.StatusInterval > 0 {
		go s.logStatus(acceptCtx)
	}
	logDone := make(chan struct{})
	go func() { defer close(logDone); s.logAuthFailures(acceptCtx) }()
	defer func() { stopAccepting(); <-logDone }()
	onceDone := make(chan struct{})
	var once sync.Once
	var idle *idleClock
	if s.cfg.Once && s.cfg.IdleTimeout > 0 {
		idle = newIdleClock(s.cfg.IdleTimeout, stopAccepting)
		defer idle.stop()
	}
	for {
		conn, err := s.ln.Accept()
		accepted := time.Now() // iperf3 orders a test's streams by when they connected
		if err != nil {
			if acceptCtx.Err() != nil {
				break
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Error("accept failed", "err", err)
			time.Sleep(10 * time.Millisecond) // out of descriptors: don't spin
			continue
		}
		tc := conn.(*net.TCPConn)
		idle.enter()
		client := s.cfg.Limits.clientOf(tc.RemoteAddr())
		// Admission comes before anything is read: an address the lists
		// refuse, or a source whose wrong keys emptied its bucket, never
		// takes a handshake place.
		var denied error
		if ap, err := netip.ParseAddrPort(tc.RemoteAddr().String()); err == nil {
			if err := s.cfg.ACL.Check(ap.Addr()); err != nil {
				s.stats.denied.Add(1)
				denied = refusal{reason: err.Error()}
			}
		}
		if denied == nil && !s.authLimit.Allow(client, accepted) {
			s.stats.throttled.Add(1)
			closeNow(tc)
			idle.leave()
			continue
		}
		g := s.hs
		if denied != nil {
			// A few refused clients are told why, in places of their own.
			g = s.deniedHS
		}
		sl, shed, ok := g.enter(client, tc, accepted)
		if shed != nil {
			s.stats.shed.Add(1)
			closeNow(shed)
		}
		if !ok {
			// A flood costs a closed connection each, not a goroutine.
			s.stats.shed.Add(1)
			closeNow(tc)
			idle.leave()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer idle.leave()
			past := func() { g.leave(sl) }
			defer past()
			// A shutdown past its grace cuts every read short.
			defer context.AfterFunc(abortCtx, func() { _ = tc.SetReadDeadline(time.Unix(1, 0)) })()
			if s.handle(abortCtx, tc, accepted, denied, func() { g.spoke(sl) }, past) && s.cfg.Once {
				once.Do(func() { close(onceDone); stopAccepting() })
			}
		}()
	}
	select {
	case <-onceDone:
		s.wg.Wait()
		return nil
	default:
	}
	if idle.fired() {
		s.log.Info("no connection for the idle timeout: stopping, as a one-test server", "idle_timeout", s.cfg.IdleTimeout)
	}
	return s.shutdown(abortTests)
}

// idleClock calls its expire function once no connection has been open
// for its timeout (Config.IdleTimeout). A nil idleClock does nothing.
type idleClock struct {
	mu      sync.Mutex
	open    int
	expired bool
	timer   *time.Timer
	timeout time.Duration
}

func newIdleClock(timeout time.Duration, expire func()) *idleClock {
	c := &idleClock{timeout: timeout}
	c.timer = time.AfterFunc(timeout, func() {
		c.mu.Lock()
		// A connection that arrived as the timer fired keeps the server.
		fire := c.open == 0 && !c.expired
		c.expired = c.expired || fire
		c.mu.Unlock()
		if fire {
			expire()
		}
	})
	return c
}

// enter counts a connection open: the clock waits.
func (c *idleClock) enter() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open++
	c.timer.Stop()
}

// leave counts a connection closed: with none open, the clock restarts.
func (c *idleClock) leave() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if c.open == 0 {
		c.timer.Reset(c.timeout)
	}
}

func (c *idleClock) fired() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expired
}

func (c *idleClock) stop() { c.timer.Stop() }

func (s *Server) shutdown(abortTests context.CancelFunc) error {
	s.reg.drain()
	running := s.reg.running()
	s.log.Info("shutting down", "running_tests", running, "grace", s.cfg.ShutdownGrace)
	finishedBefore := s.stats.finished.Load()
	abortedBefore := s.stats.aborted.Load()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.ShutdownGrace):
		abortTests()
		<-done
	}
	s.log.Info("server stopped",
		"tests_finished_during_shutdown", s.stats.finished.Load()-finishedBefore,
		"tests_aborted", s.stats.aborted.Load()-abortedBefore)
	return nil
}

// handle reads a connection's first bytes and routes it. past is called
// once the connection is past its handshake. It reports whether a test
// ran on it.
func (s *Server) handle(ctx context.Context, conn *net.TCPConn, accepted time.Time, denied error, spoke, past func()) bool {
	// A connection says what it is at once: a silent one holds its place
	// for FirstByteTimeout only.
	first := s.cfg.HandshakeTimeout
	if t := s.cfg.Limits.FirstByteTimeout; t > 0 && t < first {
		first = t
	}
	if denied != nil {
		first = min(first, deniedHandshakeTimeout)
	}
	_ = conn.SetReadDeadline(time.Now().Add(first))
	var magic [4]byte
	if _, err := io.ReadFull(conn, magic[:]); err != nil {
		s.stats.unknown.Add(1)
		s.log.Info("connection closed before it said anything", "peer", conn.RemoteAddr().String(), "err", err)
		_ = conn.Close()
		return false
	}
	spoke()
	_ = conn.SetReadDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	if denied != nil {
		// Told why, within a short deadline.
		_ = conn.SetDeadline(time.Now().Add(deniedHandshakeTimeout))
	}
	switch {
	case magic == proto.MagicControl:
		if denied == nil && s.cfg.TLS != nil {
			denied = refusal{reason: "server requires TLS on the control connection (--tls-ca or --tls-pin)"}
		}
		return s.serveTest(ctx, conn, conn, denied, past)
	case magic[0] == tlsHandshake && s.cfg.TLS != nil:
		return s.serveTLS(ctx, conn, magic, denied, past)
	case magic == agent.Magic && s.cfg.Agent != nil:
		if denied == nil {
			s.cfg.Agent.ServeConn(ctx, conn, past)
		} else {
			_ = conn.Close()
		}
		return false
	case magic == proto.MagicData:
		if denied == nil {
			s.acceptData(conn, magic)
		} else {
			_ = conn.Close()
		}
		return false
	}
	if iperf3.CookiePrefix(magic[:]) {
		return s.serveIperf3(ctx, conn, magic, accepted, denied)
	}
	s.stats.unknown.Add(1)
	s.log.Warn("connection speaks an unknown protocol", "peer", conn.RemoteAddr().String(), "first_bytes", fmt.Sprintf("%q", magic[:]))
	_ = conn.Close()
	return false
}

// Refused clients are told why in places of their own, few and short,
// so that a flood from outside the lists costs the others nothing.
const (
	deniedHandshakes          = 32
	deniedHandshakesPerClient = 2
	deniedHandshakeTimeout    = 2 * time.Second
)

// authFailed counts a wrong key from peer toward its source's bucket;
// it says whether this is the source's first failure since the last
// summary (the one logged on its own).
func (s *Server) authFailed(peer net.Addr) bool {
	s.stats.authFailed.Add(1)
	return s.authLimit.Fail(s.cfg.Limits.clientOf(peer), time.Now())
}

// authSummaryEvery is how often wrong keys are summed up in the log.
const authSummaryEvery = time.Minute

// logAuthFailures logs, every authSummaryEvery, the sources whose keys
// were wrong and how many of their connections were turned away.
func (s *Server) logAuthFailures(ctx context.Context) {
	t := time.NewTicker(authSummaryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sum := s.authLimit.Summary()
		if len(sum) == 0 {
			continue
		}
		attrs := []any{"sources", len(sum)}
		for i, c := range sum {
			if i == 5 {
				break
			}
			attrs = append(attrs, "source_"+strconv.Itoa(i+1), fmt.Sprintf("%s failed %d, turned away %d", c.Source, c.Failed, c.Refused))
		}
		s.log.Warn("wrong keys in the last minute", attrs...)
	}
}

// closeNow closes a connection with a reset: no time in TIME_WAIT for a
// connection the server never served.
func closeNow(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// tlsHandshake opens every TLS connection: a handshake record.
const tlsHandshake = 0x16

// serveTLS runs a native test over TLS: the control connection is
// encrypted and the server authenticated, the data connections stay
// plain and are bound to the test by its token.
func (s *Server) serveTLS(ctx context.Context, conn *net.TCPConn, first [4]byte, denied error, past func()) bool {
	tc := tls.Server(&replayConn{TCPConn: conn, first: first[:]}, s.cfg.TLS)
	defer tc.Close()
	_ = conn.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		s.stats.badControl.Add(1)
		s.log.Info("TLS handshake failed", "peer", conn.RemoteAddr().String(), "err", err)
		return false
	}
	var magic [4]byte
	if _, err := io.ReadFull(tc, magic[:]); err != nil || magic != proto.MagicControl {
		s.stats.badControl.Add(1)
		s.log.Info("TLS connection without a wireperf greeting", "peer", conn.RemoteAddr().String())
		return false
	}
	return s.serveTest(ctx, conn, tc, denied, past)
}

// replayConn gives back the bytes already read before the rest.
type replayConn struct {
	*net.TCPConn
	first []byte
}

func (r *replayConn) Read(p []byte) (int, error) {
	if len(r.first) > 0 {
		n := copy(p, r.first)
		r.first = r.first[n:]
		return n, nil
	}
	return r.TCPConn.Read(p)
}

// NetConn is the TCP connection, for keepalives.
func (r *replayConn) NetConn() net.Conn { return r.TCPConn }

func (s *Server) serveTest(ctx context.Context, conn *net.TCPConn, ctl net.Conn, denied error, past func()) bool {
	defer conn.Close()
	at, err := control.Accept(ctx, ctl, control.ServeConfig{
		Registrar: s.reg, Logger: s.log, HandshakeTimeout: s.cfg.HandshakeTimeout, MaxDuration: s.cfg.Limits.MaxDuration,
		UDP: s.udp, Keys: s.cfg.Keys, HandshakeDone: past, Refuse: denied, ServerOutput: s.cfg.ServerOutput,
	})
	if err != nil {
		return s.record(conn, nil, err, nil)
	}
	defer at.Release()
	live := s.liveTest(conn.RemoteAddr())
	var res *result.Result
	if at.Request.Spec.Protocol == spec.RR {
		res, err = rrcontrol.Serve(ctx, at)
	} else {
		res, err = session.ServeBulk(ctx, at, live)
	}
	return s.record(conn, res, err, live)
}

// serveIperf3 handles a connection that opened with the start of an
// iperf3 cookie: a data connection of a running iperf3 test, or a new
// iperf3 client.
func (s *Server) serveIperf3(ctx context.Context, conn *net.TCPConn, first [4]byte, accepted time.Time, denied error) bool {
	var cookie iperf3.Cookie
	copy(cookie[:], first[:])
	if _, err := io.ReadFull(conn, cookie[4:]); err != nil {
		s.stats.unknown.Add(1)
		_ = conn.Close()
		return false
	}
	_ = conn.SetReadDeadline(time.Time{})
	if denied == nil && s.ip3.Deliver(cookie, conn, accepted) {
		return false // the test owns the connection now
	}
	defer conn.Close()
	// An iperf3 client proves no key, even on a server with keys
	// (--iperf3-open).
	var meter *testMeter // the test's account under the byte caps, once admitted
	admit := func(peer net.Addr, sp spec.Spec) (release func(), err error) {
		release, meter, err = s.reg.reserve(peer, sp, false)
		return release, err
	}
	if denied != nil {
		admit = func(net.Addr, spec.Spec) (func(), error) { return nil, denied }
	}
	var read func(int64) error
	if s.reg.caps.active() {
		read = func(moved int64) error { return meter.Read(moved) }
	}
	live := s.liveTest(conn.RemoteAddr())
	res, err := iperf3.Serve(ctx, conn, cookie[:], iperf3.ServeConfig{
		Registry: s.ip3, UDP: s.udp, Admit: admit, Logger: s.log.With("client_kind", "iperf3"),
		Meter: read, MeterEvery: s.reg.caps.every(),
		RefuseAuth: s.cfg.Keys != nil && !s.cfg.Iperf3Open, Auth: s.cfg.Iperf3Auth,
		HandshakeTimeout: s.cfg.HandshakeTimeout, MaxDuration: s.cfg.Limits.MaxDuration,
		ServerOutput: s.cfg.ServerOutput, Live: live,
	})
	return s.record(conn, res, err, live)
}

// record counts a test's outcome and hands its result on. It reports
// whether a test ran.
func (s *Server) record(conn *net.TCPConn, res *result.Result, err error, live *liveTest) bool {
	if res == nil {
		var ref refusal
		var ae *control.AuthError
		var ie *iperf3.AuthError
		if errors.As(err, &ae) {
			if s.authFailed(conn.RemoteAddr()) {
				s.log.Warn("authentication failed (further failures from this client are counted in a summary each minute)",
					"peer", conn.RemoteAddr().String(), "user", ae.User, "reason", ae.Reason)
			}
		} else if errors.As(err, &ie) {
			if s.authFailed(conn.RemoteAddr()) {
				s.log.Warn("iperf3 authentication failed (further failures from this client are counted in a summary each minute)",
					"peer", conn.RemoteAddr().String(), "user", ie.User, "reason", ie.Reason)
			}
		} else if errors.As(err, &ref) {
			s.stats.refused.Add(1)
			s.log.Info("test refused", "peer", conn.RemoteAddr().String(), "reason", err)
		} else if err != nil {
			s.stats.badControl.Add(1)
			s.log.Info("control connection dropped before its test ran", "peer", conn.RemoteAddr().String(), "reason", err)
		}
		return false
	}
	s.stats.accepted.Add(1)
	id := live.number()
	if res.Error != "" {
		s.stats.aborted.Add(1)
	} else {
		s.stats.finished.Add(1)
	}
	if s.cfg.OnResult != nil {
		s.cfg.OnResult(res)
	}
	if s.cfg.OnTest != nil {
		s.cfg.OnTest(Finished{ID: id, Peer: conn.RemoteAddr(), Result: res})
	}
	return true
}

func (s *Server) acceptData(conn *net.TCPConn, magic [4]byte) {
	var rest [proto.DataHelloLen - 4]byte
	if _, err := io.ReadFull(conn, rest[:]); err != nil {
		s.stats.foreign.Add(1)
		_ = conn.Close()
		return
	}
	h, err := proto.ParseDataHello(append(magic[:], rest[:]...))
	if err == nil {
		_ = conn.SetReadDeadline(time.Time{})
		if s.reg.deliver(h, conn) {
			return
		}
	}
	s.stats.foreign.Add(1)
	s.log.Warn("data connection for no known test", "peer", conn.RemoteAddr().String())
	_ = conn.Close()
}

// logStatus logs the counters, the running tests, the goroutines and the
// heap, for a watcher of a long-running server (bench/soak.sh reads it).
func (s *Server) logStatus(ctx context.Context) {
	tick := time.NewTicker(s.cfg.StatusInterval)
	defer tick.Stop()
	heap := newHeapStatus()
	var leak soakLeak
	if note := leak.note(); note != "" {
		s.log.Warn(note)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			st := s.Stats()
			leak.add(st.TestsAccepted)
			attrs := []any{"running_tests", st.Running, "handshakes", st.Handshakes,
				"goroutines", runtime.NumGoroutine(), "accepted", st.TestsAccepted, "refused", st.TestsRefused,
				"shed", st.Shed, "denied", st.Denied, "auth_failed", st.AuthFailed, "throttled", st.Throttled}
			s.log.Info("server status", append(attrs, heap.read()...)...)
		}
	}
}

// liveTest numbers a test when its streams start, and passes what it
// sees on to the observer Config.Live gives for that number.
type liveTest struct {
	s    *Server
	peer net.Addr
	id   int64
	obs  result.Observer
}

func (s *Server) liveTest(peer net.Addr) *liveTest { return &liveTest{s: s, peer: peer} }

// number is the test's ID: the one it took when it started, or a new one
// for a test that ended before its streams did.
func (l *liveTest) number() int64 {
	if l.id == 0 {
		l.id = l.s.stats.testIDs.Add(1)
	}
	return l.id
}

func (l *liveTest) Started(r *result.Result) {
	id := l.number()
	if l.s.cfg.Live != nil {
		l.obs = l.s.cfg.Live(id, l.peer)
	}
	if l.obs != nil {
		l.obs.Started(r)
	}
}

func (l *liveTest) Interval(r *result.Result, row result.IntervalRow) {
	if l.obs != nil {
		l.obs.Interval(r, row)
	}
}
