// Package server is wireperf's server: one listening port that runs many
// tests at once, each isolated by its token, under limits, and that shuts
// down cleanly.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/udpmux"
)

// Config is a server's configuration.
type Config struct {
	Bind   string // address to listen on; "" for every address, IPv4 and IPv6
	Port   int
	Once   bool // serve one test, then stop
	Limits Limits
	// ShutdownGrace is how long running tests may go on after a shutdown
	// request before they are aborted.
	ShutdownGrace time.Duration
	// HandshakeTimeout bounds a connection's silence before its test runs.
	HandshakeTimeout time.Duration
	Logger           *slog.Logger
	// OnResult receives the server's record of every test that ran.
	OnResult func(*result.Result)
	// ServerOutput renders a test for an iperf3 client that asks for
	// --get-server-output; nil sends none.
	ServerOutput func(*result.Result) ([]byte, bool)
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
	Running       int
}

// Server serves tests.
type Server struct {
	cfg Config
	log *slog.Logger
	reg *registry
	ln  net.Listener
	udp *udpmux.Mux
	ip3 *iperf3.Registry

	stats struct {
		accepted, refused, finished, aborted, badControl, foreign, unknown atomic.Int64
	}
	wg sync.WaitGroup
}

// New makes a server; Listen binds it.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 5 * time.Second
	}
	return &Server{cfg: cfg, log: cfg.Logger, reg: newRegistry(cfg.Limits), ip3: iperf3.NewRegistry()}
}

// Listen binds the port. Port 0 picks a free one; Addr tells which.
func (s *Server) Listen() error {
	addr := net.JoinHostPort(s.cfg.Bind, strconv.Itoa(s.cfg.Port))
	ln, err := net.Listen("tcp", addr)
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
		Running:       s.reg.running(),
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
		"max_tests", s.cfg.Limits.MaxTests, "max_streams", s.cfg.Limits.MaxStreams, "max_duration", s.cfg.Limits.MaxDuration)
	acceptCtx, stopAccepting := context.WithCancel(ctx)
	defer stopAccepting()
	abortCtx, abortTests := context.WithCancel(context.Background())
	defer abortTests()
	go func() {
		<-acceptCtx.Done()
		_ = s.ln.Close()
	}()
	defer s.udp.Close()
	onceDone := make(chan struct{})
	var once sync.Once
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
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if s.handle(abortCtx, conn.(*net.TCPConn), accepted) && s.cfg.Once {
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
	return s.shutdown(abortTests)
}

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

// handle reads a connection's first bytes and routes it. It reports
// whether a test ran on it.
func (s *Server) handle(ctx context.Context, conn *net.TCPConn, accepted time.Time) bool {
	_ = conn.SetReadDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	var magic [4]byte
	if _, err := io.ReadFull(conn, magic[:]); err != nil {
		s.stats.unknown.Add(1)
		s.log.Debug("connection closed before it said anything", "peer", conn.RemoteAddr().String(), "err", err)
		_ = conn.Close()
		return false
	}
	switch magic {
	case proto.MagicControl:
		return s.serveTest(ctx, conn)
	case proto.MagicData:
		s.acceptData(conn, magic)
		return false
	}
	if iperf3.CookiePrefix(magic[:]) {
		return s.serveIperf3(ctx, conn, magic, accepted)
	}
	s.stats.unknown.Add(1)
	s.log.Warn("connection speaks an unknown protocol", "peer", conn.RemoteAddr().String(), "first_bytes", fmt.Sprintf("%q", magic[:]))
	_ = conn.Close()
	return false
}

func (s *Server) serveTest(ctx context.Context, conn *net.TCPConn) bool {
	defer conn.Close()
	res, err := session.Serve(ctx, conn, session.ServeConfig{
		Registrar: s.reg, Logger: s.log, HandshakeTimeout: s.cfg.HandshakeTimeout, MaxDuration: s.cfg.Limits.MaxDuration,
		UDP: s.udp, RR: rrcontrol.Serve,
	})
	return s.record(conn, res, err)
}

// serveIperf3 handles a connection that opened with the start of an
// iperf3 cookie: a data connection of a running iperf3 test, or a new
// iperf3 client.
func (s *Server) serveIperf3(ctx context.Context, conn *net.TCPConn, first [4]byte, accepted time.Time) bool {
	var cookie iperf3.Cookie
	copy(cookie[:], first[:])
	if _, err := io.ReadFull(conn, cookie[4:]); err != nil {
		s.stats.unknown.Add(1)
		_ = conn.Close()
		return false
	}
	_ = conn.SetReadDeadline(time.Time{})
	if s.ip3.Deliver(cookie, conn, accepted) {
		return false // the test owns the connection now
	}
	defer conn.Close()
	res, err := iperf3.Serve(ctx, conn, cookie[:], iperf3.ServeConfig{
		Registry: s.ip3, UDP: s.udp, Admit: s.reg.reserve, Logger: s.log.With("protocol", "iperf3"),
		HandshakeTimeout: s.cfg.HandshakeTimeout, MaxDuration: s.cfg.Limits.MaxDuration,
		ServerOutput: s.cfg.ServerOutput,
	})
	return s.record(conn, res, err)
}

// record counts a test's outcome and hands its result on. It reports
// whether a test ran.
func (s *Server) record(conn *net.TCPConn, res *result.Result, err error) bool {
	if res == nil {
		var ref refusal
		if errors.As(err, &ref) {
			s.stats.refused.Add(1)
			s.log.Info("test refused", "peer", conn.RemoteAddr().String(), "reason", err)
		} else if err != nil {
			s.stats.badControl.Add(1)
			s.log.Info("control connection dropped before its test ran", "peer", conn.RemoteAddr().String(), "reason", err)
		}
		return false
	}
	s.stats.accepted.Add(1)
	if res.Error != "" {
		s.stats.aborted.Add(1)
	} else {
		s.stats.finished.Add(1)
	}
	if s.cfg.OnResult != nil {
		s.cfg.OnResult(res)
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
