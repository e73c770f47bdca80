// Package rrcontrol is the control plane of request-response tests: the
// exchange on the control connection that sets up internal/rr's data
// path, starts and stops it, and trades each end's report. Session does
// the handshake on both ends and hands the connection over.
package rrcontrol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// A request-response test (spec.RR) on the server, after session.Serve
// admitted it:
//
//	client                               server
//	TestRequest            →
//	                       ←  TestAccept (token)
//	data path: udp: hellos on the UDP port (udpmux), as a UDP stream's;
//	           tcp: one data connection with the token;
//	           crr: nothing yet
//	                       ←  StreamsReady
//	ClockRequest × n       ↔  ClockReply × n (also allowed later)
//	Start                  →
//	requests and responses; crr: one data connection with the token
//	per transaction, as many as come until the test ends
//	Stop                   →
//	                       ←  EndReport (the server's End, RR filled)
//	EndReport              →  (the client's End, for the server's record)
type server struct {
	ctx  context.Context
	t    *session.AdmittedTest
	log  *slog.Logger
	spec spec.Spec
	// controlRTT is the client's measure of the control round trip.
	controlRTT time.Duration

	udp  *net.UDPConn
	tcp  *net.TCPConn
	refl *rr.Reflector
	// crrOptions go on each crr connection; crrErr is the first that
	// failed (tryOptions makes that unlikely).
	crrOptions sockopt.Options
	crrErr     atomic.Pointer[error]
	done       chan struct{} // closed when Serve returns
}

// Serve runs a request-response test on an admitted control connection;
// session.Serve hands it over after the admission (ServeConfig.RR).
func Serve(ctx context.Context, t *session.AdmittedTest) (*result.Result, error) {
	req, adm, conn := t.Request, t.Admission, t.Conn
	s := &server{
		ctx: ctx, t: t, spec: req.Spec,
		controlRTT: time.Duration(req.ControlRTTNs),
		log:        t.Log.With("test", adm.Token.String()[:8], "client", conn.RemoteAddr().String(), "kind", "rr"),
		done:       make(chan struct{}),
	}
	defer s.close()
	res := &result.Result{Spec: s.spec, Token: adm.Token.String(), StartedAt: time.Now()}
	res.Remote = result.End{Role: result.RoleClient, Host: req.Client}
	if err := s.t.Send(proto.TypeTestAccept, proto.TestAccept{
		Token: adm.Token.String(), Server: flowrun.LocalHost(), Limits: netsetup.LocalLimits(),
	}); err != nil {
		return nil, err
	}
	var ready proto.StreamsReady
	if err := s.dataPath(&ready); err != nil {
		_ = s.t.Send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	if err := s.t.Send(proto.TypeStreamsReady, ready); err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	_ = conn.SetKeepAlive(true)
	_ = conn.SetKeepAlivePeriod(5 * time.Second)
	ctl := s.readControl()
	if err := s.waitStart(ctl); err != nil {
		return nil, fmt.Errorf("waiting for start: %w", err)
	}
	s.log.Info("rr test started", "mode", s.spec.RRMode, "sizes", s.spec.RRSizes, "busy_poll", s.spec.RRBusyPoll)
	end, testErr := s.run(ctl)
	if testErr != nil {
		end.Error = testErr.Error()
		res.Error = testErr.Error()
	}
	res.Local = end
	if err := s.t.Send(proto.TypeEndReport, end); err == nil && testErr == nil {
		select {
		case fr := <-ctl.frames:
			var ce result.End
			if fr.Type == proto.TypeEndReport && fr.Decode(&ce) == nil {
				res.Remote = ce
			}
		case <-ctl.lost:
		case <-time.After(session.EndReportTimeout):
		}
	}
	s.log.Info("rr test finished", "error", res.Error, "served", end.RR.Served, "crr_turned_away", s.refl.TurnedAway())
	return res, testErr
}

// dataPath sets up the test's UDP socket or TCP connection.
func (s *server) dataPath(ready *proto.StreamsReady) error {
	switch s.spec.RRMode {
	case spec.RRUDP:
		if s.t.Config.UDP == nil {
			return errors.New("this server does not serve UDP")
		}
		peer := s.t.Conn.RemoteAddr().(*net.TCPAddr).IP
		ctx, cancel := context.WithTimeout(s.ctx, s.t.Handshake)
		defer cancel()
		conn, _, _, err := s.t.Config.UDP.Expect(ctx, func(p []byte, from *net.UDPAddr) bool {
			h, ok := udpflow.ParseHello(p)
			return ok && h.Token == [16]byte(s.t.Admission.Token) && h.StreamID == 1 && from.IP.Equal(peer)
		})
		if err != nil {
			return fmt.Errorf("the rr UDP socket never said hello: %w", err)
		}
		s.udp = conn
		if err := applyOptions(conn, sockopt.Options{SndBuf: int(s.spec.Window), RcvBuf: int(s.spec.Window), TOS: s.spec.TOS}); err != nil {
			return err
		}
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: 1, LocalAddr: conn.LocalAddr().String(), RemoteAddr: conn.RemoteAddr().String(),
			Socket: flowrun.GrantedSocket(conn, s.spec),
		})
	case spec.RRTCP:
		timer := time.NewTimer(s.t.Handshake)
		defer timer.Stop()
		select {
		case dc := <-s.t.Admission.Data:
			if dc.StreamID != 1 {
				_ = dc.Conn.Close()
				return fmt.Errorf("data connection with bad stream ID %d", dc.StreamID)
			}
			s.tcp = dc.Conn
		case <-timer.C:
			return fmt.Errorf("the rr data connection did not arrive within %v", s.t.Handshake)
		case <-s.ctx.Done():
			return errors.New("server shutting down")
		}
		if err := applyOptions(s.tcp, netsetup.TCPOptions(s.spec, false, false)); err != nil {
			return err
		}
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: 1, LocalAddr: s.tcp.LocalAddr().String(), RemoteAddr: s.tcp.RemoteAddr().String(),
			Socket: flowrun.GrantedSocket(s.tcp, s.spec),
		})
	case spec.RRCRR:
		// Connections come one per transaction once the test runs: try
		// their options now on a socket of the same kind, so that a test
		// they fail on is refused before it starts, as in the other modes.
		if err := tryOptions(s.ctx, s.t.Conn.LocalAddr().(*net.TCPAddr).IP, netsetup.TCPOptions(s.spec, false, false)); err != nil {
			return err
		}
	}
	return nil
}

// applyOptions sets the spec's options on a data socket; the error is
// the reason the test is refused.
func applyOptions(c syscall.Conn, opts sockopt.Options) error {
	raw, err := c.SyscallConn()
	if err == nil {
		err = sockopt.Apply(raw, opts)
	}
	if err != nil {
		return fmt.Errorf("rr socket: %w", err)
	}
	return nil
}

// tryOptions sets opts on a TCP socket of ip's family, listening on a
// free port of ip for no longer than it takes.
func tryOptions(ctx context.Context, ip net.IP, opts sockopt.Options) error {
	lc := net.ListenConfig{Control: sockopt.Control(opts)}
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		return fmt.Errorf("rr socket: %w", err)
	}
	return ln.Close()
}

// rrControl is the client's control messages during an rr test. Clock
// requests are answered as they arrive, by the reader itself.
type rrControl struct {
	frames chan proto.Frame
	lost   chan error
}

// readControl reads the control connection until it fails; the server
// closes it when the test is over, which ends the reader.
func (s *server) readControl() *rrControl {
	c := &rrControl{frames: make(chan proto.Frame, 4), lost: make(chan error, 1)}
	go func() {
		for {
			fr, err := proto.ReadFrame(s.t.Conn)
			t2 := time.Now().UnixNano()
			if err != nil {
				c.lost <- err
				return
			}
			if fr.Type == proto.TypeClockRequest {
				var q proto.ClockRequest
				if err := fr.Decode(&q); err != nil {
					c.lost <- err
					return
				}
				_ = s.t.Send(proto.TypeClockReply, proto.ClockReply{T1: q.T1, T2: t2, T3: time.Now().UnixNano()})
				continue
			}
			select {
			case c.frames <- fr:
			case <-s.done:
				return
			}
			if fr.Type == proto.TypeError {
				c.lost <- errors.New("the client aborted the test")
				return
			}
		}
	}()
	return c
}

func (s *server) waitStart(ctl *rrControl) error {
	timer := time.NewTimer(s.t.Handshake)
	defer timer.Stop()
	select {
	case fr := <-ctl.frames:
		if fr.Type != proto.TypeStart {
			return fmt.Errorf("expected %v, got %v", proto.TypeStart, fr.Type)
		}
		return nil
	case err := <-ctl.lost:
		return err
	case <-timer.C:
		return errors.New("no start")
	case <-s.ctx.Done():
		return errors.New("server shutting down")
	}
}

// run answers requests until the client's Stop, a lost client, the
// server's shutdown or the test's time limit.
func (s *server) run(ctl *rrControl) (result.End, error) {
	req, resp := s.spec.RRLargest()
	s.refl = rr.NewReflector(rr.ReflectorConfig{MaxRequest: req, MaxResponse: resp, BusyPoll: s.spec.RRBusyPoll})
	cpuStart, cpuErr := hostmon.ProcessCPU()
	host := flowrun.StartHostCounters(s.spec)
	stopCRR := make(chan struct{})
	crrDone := make(chan struct{})
	switch s.spec.RRMode {
	case spec.RRUDP:
		s.refl.Go(func() error { return s.refl.ServeUDP(s.udp) })
	case spec.RRTCP:
		s.refl.Go(func() error { return s.refl.ServeTCP(s.tcp) })
	case spec.RRCRR:
		s.crrOptions = netsetup.TCPOptions(s.spec, false, false)
		s.refl.StartCRR(crrRequestWait(s.controlRTT))
		go s.acceptCRR(stopCRR, crrDone)
	}
	var limit <-chan time.Time
	if d := s.limit(); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		limit = timer.C
	}
	var testErr error
wait:
	for {
		select {
		case fr := <-ctl.frames:
			switch fr.Type {
			case proto.TypeStop:
				break wait
			case proto.TypeError:
				var e proto.Error
				_ = fr.Decode(&e)
				testErr = fmt.Errorf("client: %s", e.Message)
				break wait
			default:
				testErr = fmt.Errorf("unexpected %v during the test", fr.Type)
				break wait
			}
		case err := <-ctl.lost:
			testErr = fmt.Errorf("client went away: %w", err)
			break wait
		case <-limit:
			s.log.Warn("rr test exceeded its time; stopping it")
			testErr = errors.New("the test ran past its time limit")
			break wait
		case <-s.ctx.Done():
			_ = s.t.Send(proto.TypeError, proto.Error{Message: "server shutting down: test aborted"})
			testErr = errors.New("aborted: server shutting down")
			break wait
		}
	}
	close(stopCRR)
	if s.spec.RRMode == spec.RRCRR {
		<-crrDone
	}
	s.refl.Stop()
	s.refl.Wait()
	if testErr == nil {
		testErr = s.refl.Err()
	}
	if e := s.crrErr.Load(); testErr == nil && e != nil {
		testErr = *e
	}
	end := result.End{Role: result.RoleServer, Host: flowrun.LocalHost(), Limits: netsetup.LocalLimits(), ConcurrentTests: s.t.Admission.Concurrent()}
	if cpu, err := hostmon.ProcessCPU(); err == nil && cpuErr == nil {
		u, sy, t := hostmon.Usage(cpuStart, cpu)
		end.CPU = result.CPU{UserPercent: u, SystemPercent: sy, TotalPercent: t}
	}
	end.RR = s.refl.Report(s.spec.RRMode)
	end.HostCounters = host.Finish()
	var c net.Conn
	switch {
	case s.udp != nil:
		c = s.udp
	case s.tcp != nil:
		c = s.tcp
	}
	if c != nil {
		end.Streams = append(end.Streams, result.Stream{ID: 1, LocalAddr: c.LocalAddr().String(), RemoteAddr: c.RemoteAddr().String()})
	}
	return end, testErr
}

// acceptCRR hands each data connection of a crr test to the reflector's
// workers, until stop: the registry delivers them one at a time as the
// client opens them, for as long as the test runs. Those the workers have
// no room for are closed at once.
func (s *server) acceptCRR(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case dc := <-s.t.Admission.Data:
			if dc.StreamID != 1 {
				_ = dc.Conn.Close()
				continue
			}
			if err := applyOptions(dc.Conn, s.crrOptions); err != nil {
				_ = dc.Conn.Close()
				s.crrErr.CompareAndSwap(nil, &err)
				continue
			}
			s.refl.OfferCRR(dc.Conn)
		}
	}
}

// crrRequestWait is how long a crr connection's request may take to
// arrive whole after its hello. The two leave the client together, so
// this is the few round trips a large request needs to open the
// congestion window; the cap holds whatever round trip a client claims.
func crrRequestWait(controlRTT time.Duration) time.Duration {
	return min(max(time.Second, 8*controlRTT), 10*time.Second)
}

// limit is how long the server lets an rr test run: its time plus a
// margin, or the server's maximum for a test run by count.
func (s *server) limit() time.Duration {
	if d := s.spec.RRTotal(); d > 0 {
		return d + 30*time.Second
	}
	return s.t.Config.MaxDuration
}

func (s *server) close() {
	close(s.done)
	if s.udp != nil {
		_ = s.udp.Close()
	}
	if s.tcp != nil {
		_ = s.tcp.Close()
	}
}
