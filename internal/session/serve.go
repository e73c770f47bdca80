package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// endReportTimeout bounds the wait for the peer's final report.
const endReportTimeout = 15 * time.Second

// DataConn is a data connection that presented a test's token.
type DataConn struct {
	StreamID uint32
	Conn     *net.TCPConn
}

// Admission is a server's slot for one test.
type Admission struct {
	Token proto.Token
	// Data delivers the test's data connections. Connections that arrive
	// after Release are closed by the registrar.
	Data <-chan DataConn
	// Release frees the slot and forgets the token.
	Release func()
	// Concurrent reports how many other tests run now.
	Concurrent func() int
}

// Registrar admits tests under the server's limits and routes data
// connections to them by token.
type Registrar interface {
	Admit(peer net.Addr, s spec.Spec) (*Admission, error)
}

// ServeConfig is what a server's test session needs.
type ServeConfig struct {
	Registrar        Registrar
	Logger           *slog.Logger
	HandshakeTimeout time.Duration
	// MaxDuration bounds tests that stop on bytes (-n), whose length the
	// spec cannot tell; 0 means no bound.
	MaxDuration time.Duration
	// UDP hands out the server's UDP port to UDP streams; nil refuses UDP.
	UDP UDPExpecter
	// RR runs request-response tests; nil refuses them.
	RR ServeKind
}

// UDPExpecter gives a stream a socket of its own on the server's UDP port
// once its first datagram arrives (internal/udpmux).
type UDPExpecter interface {
	Expect(ctx context.Context, match func(payload []byte, from *net.UDPAddr) bool) (*net.UDPConn, []byte, *net.UDPAddr, error)
}

// Serve runs one test on the server side of a control connection whose
// first four bytes (the magic) were already read. It returns the server's
// record of the test; a test refused before it started returns nil and
// the refusal. Cancelling ctx aborts a running test and tells the client.
func Serve(ctx context.Context, conn *net.TCPConn, cfg ServeConfig) (*result.Result, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	hs := cfg.HandshakeTimeout
	if hs == 0 {
		hs = 10 * time.Second
	}
	_ = conn.SetDeadline(time.Now().Add(hs))
	var rest [proto.GreetingLen - 4]byte
	if _, err := io.ReadFull(conn, rest[:]); err != nil {
		return nil, fmt.Errorf("reading greeting: %w", err)
	}
	if _, err := proto.ParseGreeting(append(proto.MagicControl[:], rest[:]...), proto.MagicControl); err != nil {
		_ = proto.WriteFrame(conn, proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	if err := proto.WriteGreeting(conn, proto.MagicServer); err != nil {
		return nil, err
	}
	fr, err := proto.ReadFrame(conn)
	if err != nil {
		return nil, fmt.Errorf("reading test request: %w", err)
	}
	var req proto.TestRequest
	if fr.Type != proto.TypeTestRequest {
		err = fmt.Errorf("expected %v, got %v", proto.TypeTestRequest, fr.Type)
	} else if err = fr.Decode(&req); err == nil {
		err = req.Spec.Validate()
	}
	if err == nil && req.Spec.Protocol == spec.RR && cfg.RR == nil {
		err = errors.New("this server does not run request-response tests")
	}
	if err != nil {
		_ = proto.WriteFrame(conn, proto.TypeError, proto.Error{Message: "bad test request: " + err.Error()})
		return nil, err
	}
	adm, err := cfg.Registrar.Admit(conn.RemoteAddr(), req.Spec)
	if err != nil {
		_ = proto.WriteFrame(conn, proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	defer adm.Release()
	if req.Spec.Protocol == spec.RR { // request-response: internal/rr/rrcontrol
		return cfg.RR(ctx, &AdmittedTest{Conn: conn, Request: req, Admission: adm, Config: cfg, Log: log, Handshake: hs, fw: &frameWriter{w: conn}})
	}
	t := &serverTest{
		ctx: ctx, cfg: cfg, log: log.With("test", adm.Token.String()[:8], "client", conn.RemoteAddr().String()),
		conn: conn, fw: &frameWriter{w: conn}, spec: req.Spec, adm: adm, hs: hs,
		controlRTT: time.Duration(req.ControlRTTNs),
	}
	res, err := t.run(req.Client)
	for _, f := range t.flows {
		_ = f.Close()
	}
	return res, err
}

type serverTest struct {
	ctx   context.Context
	cfg   ServeConfig
	log   *slog.Logger
	conn  *net.TCPConn
	fw    *frameWriter
	spec  spec.Spec
	adm   *Admission
	hs    time.Duration
	flows []flowrun.Flow
	// controlRTT is the client's measure of the control round trip.
	controlRTT time.Duration
}

func (t *serverTest) run(client result.Host) (*result.Result, error) {
	res := &result.Result{Spec: t.spec, Token: t.adm.Token.String(), StartedAt: time.Now()}
	res.Remote = result.End{Role: result.RoleClient, Host: client}
	if err := t.fw.send(proto.TypeTestAccept, proto.TestAccept{
		Token: t.adm.Token.String(), Server: flowrun.LocalHost(), Limits: netsetup.LocalLimits(),
	}); err != nil {
		return nil, err
	}
	sockets, err := t.collectStreams()
	if err != nil {
		_ = t.fw.send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	fr, err := proto.ReadFrame(t.conn)
	if err == nil && fr.Type != proto.TypeStart {
		err = fmt.Errorf("expected %v, got %v", proto.TypeStart, fr.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for start: %w", err)
	}
	_ = t.conn.SetDeadline(time.Time{})
	_ = t.conn.SetKeepAlive(true)
	_ = t.conn.SetKeepAlivePeriod(5 * time.Second)
	t.log.Info("test started", "streams", t.spec.Streams, "reverse", t.spec.Reverse, "bidir", t.spec.Bidir, "duration", t.spec.Duration)

	run := flowrun.New(t.spec, t.flows, sockets, func(iv result.Interval) {
		_ = t.fw.send(proto.TypeInterval, iv)
	})
	control := readControl(t.conn)
	run.Start()
	testErr := t.wait(run, control)
	end := run.Finish(result.RoleServer)
	end.Limits = netsetup.LocalLimits()
	end.ConcurrentTests = t.adm.Concurrent()
	if testErr == nil {
		testErr = run.FirstError()
	}
	if testErr != nil {
		end.Error = testErr.Error()
		res.Error = testErr.Error()
	}
	res.Local = end
	if err := t.fw.send(proto.TypeEndReport, withoutIntervals(end)); err == nil && testErr == nil {
		select {
		case ce := <-control.end:
			res.Remote = ce
		case <-control.lost:
			// The client hangs up right after its report: both may be ready.
			select {
			case ce := <-control.end:
				res.Remote = ce
			default:
			}
		case <-time.After(endReportTimeout):
		}
	}
	t.log.Info("test finished", "error", res.Error, "flows", summaryAttrs(res))
	return res, testErr
}

// collectStreams waits for every data connection of the test, applies
// the spec's socket options to each and tells the client they are ready.
func (t *serverTest) collectStreams() (map[int]result.Socket, error) {
	var ready proto.StreamsReady
	var err error
	if t.spec.Protocol == spec.UDP {
		err = t.collectUDP(&ready)
	} else {
		err = t.collectTCP(&ready)
	}
	if err != nil {
		return nil, err
	}
	sockets := map[int]result.Socket{}
	for _, ss := range ready.Streams {
		sockets[ss.ID] = ss.Socket
	}
	return sockets, t.fw.send(proto.TypeStreamsReady, ready)
}

func (t *serverTest) collectTCP(ready *proto.StreamsReady) error {
	want := t.spec.DataConns()
	seen := map[int]bool{}
	timer := time.NewTimer(t.hs)
	defer timer.Stop()
	for len(t.flows) < want {
		select {
		case dc := <-t.adm.Data:
			id := int(dc.StreamID)
			if id < 1 || id > want || seen[id] {
				_ = dc.Conn.Close()
				return fmt.Errorf("data connection with bad stream ID %d", id)
			}
			seen[id] = true
			if err := netsetup.SetupAccepted(dc.Conn, t.spec, !t.spec.ClientSendsOn(id)); err != nil {
				_ = dc.Conn.Close()
				return fmt.Errorf("server: %w", err)
			}
			st, err := newTCPStream(id, !t.spec.ClientSendsOn(id), dc.Conn, t.spec)
			if err != nil {
				_ = dc.Conn.Close()
				return fmt.Errorf("server: %w", err)
			}
			t.flows = append(t.flows, flowrun.NewTCPFlow(st, t.spec.Length, t.spec.TimelinePeriod()))
			ready.Streams = append(ready.Streams, proto.ServerStream{
				ID: id, LocalAddr: dc.Conn.LocalAddr().String(), RemoteAddr: dc.Conn.RemoteAddr().String(),
				Socket: flowrun.GrantedSocket(dc.Conn, t.spec),
			})
		case <-timer.C:
			return fmt.Errorf("only %d of %d data connections arrived within %v", len(t.flows), want, t.hs)
		case <-t.ctx.Done():
			return errors.New("server shutting down")
		}
	}
	return nil
}

// collectUDP waits for each stream's hello on the server's UDP port and
// gives the stream its own socket. Only the control connection's host may
// open streams of the test.
func (t *serverTest) collectUDP(ready *proto.StreamsReady) error {
	if t.cfg.UDP == nil {
		return errors.New("this server does not serve UDP")
	}
	peer := t.conn.RemoteAddr().(*net.TCPAddr).IP
	ctx, cancel := context.WithTimeout(t.ctx, t.hs)
	defer cancel()
	type got struct {
		id   int
		conn *net.UDPConn
		err  error
	}
	want := t.spec.DataConns()
	ch := make(chan got, want)
	for id := 1; id <= want; id++ {
		go func() {
			conn, _, _, err := t.cfg.UDP.Expect(ctx, func(p []byte, from *net.UDPAddr) bool {
				h, ok := udpflow.ParseHello(p)
				return ok && h.Token == [16]byte(t.adm.Token) && int(h.StreamID) == id && from.IP.Equal(peer)
			})
			ch <- got{id, conn, err}
		}()
	}
	var firstErr error
	for range want {
		g := <-ch
		if g.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("UDP stream %d never said hello: %w", g.id, g.err)
			}
			continue
		}
		f, err := flowrun.NewUDPFlow(g.conn, t.spec, [16]byte(t.adm.Token), g.id, !t.spec.ClientSendsOn(g.id))
		if err != nil {
			_ = g.conn.Close()
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		t.flows = append(t.flows, f)
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: g.id, LocalAddr: g.conn.LocalAddr().String(), RemoteAddr: g.conn.RemoteAddr().String(),
			Socket: flowrun.UDPSocket(g.conn, t.spec, f.Sender()),
		})
	}
	return firstErr
}

// wait runs the test until every flow has finished: the client's Stop
// ends the server's senders, the client's SenderDone lets the server's
// receivers drain, and a lost client or a shutdown aborts the test.
func (t *serverTest) wait(run *flowrun.Runner, control *controlReader) error {
	var limit <-chan time.Time
	if d := t.limit(); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		limit = timer.C
	}
	done := run.Done()
	sendersDone := run.SendersDone()
	for {
		select {
		case <-done:
			if sendersDone != nil { // done and sendersDone were ready at once
				_ = t.fw.send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			}
			return nil
		case <-control.stop:
			run.StopSenders()
			control.stop = nil
		case <-sendersDone:
			_ = t.fw.send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			sendersDone = nil
		case sent := <-control.senderDone:
			run.SetPeerSent(sent)
			run.DrainReceivers(netsetup.DrainTime(t.spec, t.controlRTT))
		case <-limit:
			t.log.Warn("test exceeded its time; stopping it")
			run.StopSenders()
			run.DrainReceivers(2 * time.Second)
			limit = nil
		case err := <-control.lost:
			run.Abort()
			<-done
			return fmt.Errorf("client went away: %w", err)
		case <-t.ctx.Done():
			_ = t.fw.send(proto.TypeError, proto.Error{Message: "server shutting down: test aborted"})
			run.Abort()
			<-done
			return errors.New("aborted: server shutting down")
		}
	}
}

// limit is how long the server lets a test run before stopping it: the
// client's own time plus a margin, or the server's maximum for tests that
// stop on bytes.
func (t *serverTest) limit() time.Duration {
	if t.spec.Duration > 0 {
		return t.spec.Duration + 30*time.Second
	}
	return t.cfg.MaxDuration
}

func summaryAttrs(r *result.Result) []any {
	var out []any
	for _, d := range r.Directions() {
		out = append(out, slog.Group(d.Label(),
			"sent_bytes", d.Sent.Bytes, "received_bytes", d.Received.Bytes,
			"received_bps", d.Received.BitsPerSecond()))
	}
	return out
}
