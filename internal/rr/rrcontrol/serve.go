// Package rrcontrol is the control plane of request-response tests: the
// exchange on the control connection that sets up internal/rr's data
// path, starts and stops it, and trades each end's report. Session does
// the handshake on both ends and hands the connection over.
package rrcontrol

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// A request-response test (spec.RR) on the server, after control.Accept
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
	*control.AdmittedTest
	ctx context.Context

	udp  *net.UDPConn
	tcp  *net.TCPConn
	refl *rr.Reflector
	// crrOptions go on each crr connection; crrErr is the first that
	// failed (tryOptions makes that unlikely).
	crrOptions sockopt.Options
	crrErr     atomic.Pointer[error]
}

// Serve runs a request-response test that control.Accept admitted, on its
// control connection; the server calls it for a spec of protocol rr.
func Serve(ctx context.Context, t *control.AdmittedTest) (*result.Result, error) {
	t.Log = t.Log.With("kind", "rr")
	s := &server{AdmittedTest: t, ctx: ctx}
	req, adm := t.Request, t.Admission
	defer s.close()
	res := &result.Result{Spec: req.Spec, Token: adm.Token.String(), StartedAt: time.Now()}
	res.Remote = result.End{Role: result.RoleClient, Host: req.Client}
	if err := s.Send(proto.TypeTestAccept, proto.TestAccept{
		Token: adm.Token.String(), Server: flowrun.LocalHost(), Limits: netsetup.LimitsFor(t.Conn.LocalAddr().String()),
	}); err != nil {
		return nil, err
	}
	// From here the reader watches the control connection: a client that
	// hangs up during set-up frees its slot at once, and one that sends
	// what the state does not admit hears why.
	ev := s.Listen()
	var ready proto.StreamsReady
	if err := s.dataPath(&ready, ev.Lost); err != nil {
		s.Abort(err.Error())
		return nil, err
	}
	if err := s.Send(proto.TypeStreamsReady, ready); err != nil {
		return nil, err
	}
	if tc := s.TCP(); tc != nil {
		_ = tc.SetKeepAlive(true)
		_ = tc.SetKeepAlivePeriod(KeepAlivePeriod(t.ControlRTT()))
	}
	if err := s.waitStart(ev); err != nil {
		err = fmt.Errorf("waiting for start: %w", err)
		s.Abort(err.Error())
		return nil, err
	}
	s.Log.Info("rr test started", "mode", s.Request.Spec.RRMode, "sizes", s.Request.Spec.RRSizes, "busy_poll", s.Request.Spec.RRBusyPoll)
	end, testErr := s.run(ev)
	if testErr != nil {
		end.Error = testErr.Error()
		res.Error = testErr.Error()
	}
	res.Local = end
	var pe *control.ProtocolError
	if errors.As(testErr, &pe) {
		s.Abort(pe.Error()) // the client broke the protocol: it hears why, not a report
	} else if err := s.Send(proto.TypeEndReport, end); err == nil && testErr == nil {
		timer := time.NewTimer(control.EndReportTimeout)
		defer timer.Stop()
		select {
		case ce := <-ev.End:
			res.Remote = ce
		case <-ev.Lost:
			// The client hangs up right after its report: both may be ready.
			select {
			case ce := <-ev.End:
				res.Remote = ce
			default:
			}
		case <-timer.C:
		case <-s.ctx.Done():
		}
	}
	s.Log.Info("rr test finished", "error", res.Error, "served", end.RR.Served, "crr_turned_away", s.refl.TurnedAway())
	return res, testErr
}

// dataPath sets up the test's UDP socket or TCP connection. lost is the
// control reader's: a client that leaves or breaks the protocol ends the
// set-up.
func (s *server) dataPath(ready *proto.StreamsReady, lost <-chan error) error {
	switch s.Request.Spec.RRMode {
	case spec.RRUDP:
		if s.Config.UDP == nil {
			return errors.New("this server does not serve UDP")
		}
		peer := s.TCP().RemoteAddr().(*net.TCPAddr).IP
		ctx, cancel := context.WithTimeout(s.ctx, s.Handshake)
		defer cancel()
		// A client that leaves during the wait ends it at once.
		watch, stopWatch := make(chan error, 1), make(chan struct{})
		go func() {
			select {
			case err := <-lost:
				cancel()
				watch <- err
			case <-stopWatch:
				watch <- nil
			}
		}()
		conn, _, _, err := s.Config.UDP.Expect(ctx, func(p []byte, from *net.UDPAddr) bool {
			h, ok := udpflow.ParseHello(p)
			return ok && h.Token == [16]byte(s.Admission.Token) && h.StreamID == 1 && from.IP.Equal(peer)
		})
		close(stopWatch)
		if lostErr := <-watch; lostErr != nil {
			if conn != nil {
				_ = conn.Close()
			}
			return fmt.Errorf("set-up: %w", lostErr)
		}
		if err != nil {
			return fmt.Errorf("the rr UDP socket never said hello: %w", err)
		}
		s.udp = conn
		if err := applyOptions(conn, netsetup.UDPOptions(s.Request.Spec, false)); err != nil {
			return err
		}
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: 1, LocalAddr: conn.LocalAddr().String(), RemoteAddr: conn.RemoteAddr().String(),
			Socket: flowrun.GrantedSocket(conn, s.Request.Spec),
		})
	case spec.RRTCP:
		timer := time.NewTimer(s.Handshake)
		defer timer.Stop()
		select {
		case dc := <-s.Admission.Data:
			if dc.StreamID != 1 {
				_ = dc.Conn.Close()
				return fmt.Errorf("data connection with bad stream ID %d", dc.StreamID)
			}
			s.tcp = dc.Conn
		case <-timer.C:
			return fmt.Errorf("the rr data connection did not arrive within %v", s.Handshake)
		case err := <-lost:
			return fmt.Errorf("set-up: %w", err)
		case <-s.ctx.Done():
			return errors.New("server shutting down")
		}
		if err := applyOptions(s.tcp, netsetup.TCPOptions(s.Request.Spec, false, false)); err != nil {
			return err
		}
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: 1, LocalAddr: s.tcp.LocalAddr().String(), RemoteAddr: s.tcp.RemoteAddr().String(),
			Socket: flowrun.GrantedSocket(s.tcp, s.Request.Spec),
		})
	case spec.RRCRR:
		// Connections come one per transaction once the test runs: try
		// their options now on a socket of the same kind, so that a test
		// they fail on is refused before it starts, as in the other modes.
		if err := tryOptions(s.ctx, s.TCP().LocalAddr().(*net.TCPAddr).IP, netsetup.TCPOptions(s.Request.Spec, false, false)); err != nil {
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

func (s *server) waitStart(ev control.Events) error {
	timer := time.NewTimer(s.Handshake)
	defer timer.Stop()
	select {
	case <-ev.Started:
		return nil
	case err := <-ev.Lost:
		return err
	case <-timer.C:
		return errors.New("no start")
	case <-s.ctx.Done():
		return errors.New("server shutting down")
	}
}

// run answers requests until the client's Stop, a lost client, the
// server's shutdown or the test's time limit.
func (s *server) run(ev control.Events) (result.End, error) {
	req, resp := s.Request.Spec.RRLargest()
	s.refl = rr.NewReflector(rr.ReflectorConfig{MaxRequest: req, MaxResponse: resp, BusyPoll: s.Request.Spec.RRBusyPoll,
		Paced: s.Request.Spec.RRInterval > 0})
	cpuStart, cpuErr := hostmon.ProcessCPU()
	host := flowrun.StartHostCounters(s.Request.Spec)
	stopCRR := make(chan struct{})
	crrDone := make(chan struct{})
	switch s.Request.Spec.RRMode {
	case spec.RRUDP:
		s.refl.Go(func() error { return s.refl.ServeUDP(s.udp) })
	case spec.RRTCP:
		s.refl.Go(func() error { return s.refl.ServeTCP(s.tcp) })
	case spec.RRCRR:
		s.crrOptions = netsetup.TCPOptions(s.Request.Spec, false, false)
		s.refl.StartCRR(crrRequestWait(s.ControlRTT()))
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
		case <-ev.Stopped:
			break wait
		case <-ev.End:
			testErr = errors.New("the client reported before it stopped the test")
			break wait
		case err := <-ev.Lost:
			var pe *control.ProtocolError
			if errors.As(err, &pe) {
				testErr = pe
			} else {
				testErr = fmt.Errorf("client went away: %w", err)
			}
			break wait
		case <-limit:
			s.Log.Warn("rr test exceeded its time; stopping it")
			testErr = errors.New("the test ran past its time limit")
			break wait
		case <-s.ctx.Done():
			_ = s.Send(proto.TypeError, proto.Error{Message: "server shutting down: test aborted"})
			testErr = errors.New("aborted: server shutting down")
			break wait
		}
	}
	close(stopCRR)
	if s.Request.Spec.RRMode == spec.RRCRR {
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
	end := result.End{Role: result.RoleServer, Host: flowrun.LocalHost(), Limits: netsetup.LimitsFor(s.Conn.LocalAddr().String()), ConcurrentTests: s.Admission.Concurrent()}
	if cpu, err := hostmon.ProcessCPU(); err == nil && cpuErr == nil {
		u, sy, t := hostmon.Usage(cpuStart, cpu)
		end.CPU = result.CPU{UserPercent: u, SystemPercent: sy, TotalPercent: t}
	}
	end.RR = s.refl.Report(s.Request.Spec.RRMode)
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
		case dc := <-s.Admission.Data:
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
	if d := s.Request.Spec.RRTotal(); d > 0 {
		return d + 30*time.Second
	}
	return s.Config.MaxDuration
}

func (s *server) close() {
	if s.udp != nil {
		_ = s.udp.Close()
	}
	if s.tcp != nil {
		_ = s.tcp.Close()
	}
}
