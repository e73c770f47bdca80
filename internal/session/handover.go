package session

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/stats"
)

// What session hands to the code of a kind of test it does not run
// itself (request-response, internal/rr/rrcontrol): the control
// connection once the handshake is done, on either end, and the few
// facts every kind reports the same way.

// EndReportTimeout bounds the wait for the peer's final report.
const EndReportTimeout = endReportTimeout

// AdmittedTest is a test the server admitted (Accept), for the code of
// its kind to run: ServeBulk, or rrcontrol.Serve. The handshake's
// deadline is still set on Conn. Release frees its slot.
type AdmittedTest struct {
	// Conn is the control connection: TLS over TCP, or TCP. Frames go
	// through Send and Listen; TCP is the connection under it.
	Conn      net.Conn
	Request   proto.TestRequest
	Admission *Admission
	Config    ServeConfig
	Log       *slog.Logger // names the test and the client
	// Handshake is how long each step of the set-up may take.
	Handshake time.Duration
	fw        *frameWriter
	cc        *controlConn
	authed    *auth.Session // the handshake's, when authenticated
}

// Release frees the test's slot on the server and forgets its token.
func (t *AdmittedTest) Release() { t.Admission.Release() }

// ControlRTT is the client's measure of the control round trip.
func (t *AdmittedTest) ControlRTT() time.Duration { return time.Duration(t.Request.ControlRTTNs) }

// Send writes a control frame; it is safe from several goroutines.
func (t *AdmittedTest) Send(typ proto.Type, body any) error { return t.fw.send(typ, body) }

// Abort tells the client why its test ends, within a short bound: a peer
// that broke the protocol may not be reading.
func (t *AdmittedTest) Abort(reason string) {
	t.fw.shorten(abortWrite)
	_ = t.fw.sendWithin(proto.TypeError, proto.Error{Message: reason}, abortWrite)
}

// TCP is the TCP connection under Conn, for its addresses and options.
func (t *AdmittedTest) TCP() *net.TCPConn { return rawTCP(t.Conn) }

// Events are the peer's frames once a test runs, read in the background
// through the control state machine, each kind on its own channel. Every
// kind but clock replies comes at most once.
type Events struct {
	Started <-chan struct{}           // the client's Start (server)
	Stopped <-chan struct{}           // the client's Stop (server)
	End     <-chan result.End         // the peer's final report
	Clock   <-chan stats.OffsetSample // answers to clock requests (client)
	// Lost says why reading ended: a lost connection, the peer's error
	// (a *PeerError inside), or a frame the state did not admit (a
	// *ProtocolError).
	Lost <-chan error
}

func (c *controlConn) events() Events {
	c.readLoop()
	return Events{Started: c.started, Stopped: c.stop, End: c.end, Clock: c.clock, Lost: c.lost}
}

// Listen starts reading the client's frames; clock requests are answered
// as they arrive. Call it once, after the handshake.
func (t *AdmittedTest) Listen() Events {
	t.cc.answerClock = func(q proto.ClockRequest, at time.Time) error {
		return t.fw.send(proto.TypeClockReply, proto.ClockReply{T1: q.T1, T2: at.UnixNano(), T3: time.Now().UnixNano()})
	}
	_ = t.Conn.SetReadDeadline(time.Time{})
	return t.cc.events()
}

// Control is a client's control connection once the server has accepted
// its test: what a kind of test that session does not run itself builds
// its data path and its exchange on.
type Control struct{ ct *clientTest }

// Connect dials the server, greets it and has cfg.Spec accepted. The
// errors are RunClient's: ErrRefused, an *Iperf3ServerError, a dial error.
func Connect(ctx context.Context, cfg ClientConfig) (*Control, error) {
	cfg = cfg.withDefaults()
	ct := &clientTest{cfg: cfg, spec: cfg.Spec}
	if err := ct.handshake(ctx); err != nil {
		ct.close()
		return nil, err
	}
	return &Control{ct: ct}, nil
}

// TCP is the TCP connection under the control connection (which may be
// TLS over it), for its addresses and options.
func (c *Control) TCP() *net.TCPConn { return c.ct.conn }

// SetDeadline bounds the control connection's reads and writes.
func (c *Control) SetDeadline(t time.Time) error { return c.ct.ctl.SetDeadline(t) }

// Listen starts reading the server's frames once the data path is ready
// (ReadReady). Call it once.
func (c *Control) Listen() Events { return c.ct.cc.events() }

// Send writes a control frame; it is safe from several goroutines.
func (c *Control) Send(typ proto.Type, body any) error { return c.ct.fw.send(typ, body) }

// Accept is the server's acceptance: the token, the server's host and
// limits.
func (c *Control) Accept() proto.TestAccept { return c.ct.accept }

// Addr is the server's address as dialled, host:port.
func (c *Control) Addr() string { return c.ct.addr }

// RTT is the round trip of the greeting exchange.
func (c *Control) RTT() time.Duration { return c.ct.rtt }

// Timeout is the connect timeout, which bounds each step of the set-up.
func (c *Control) Timeout() time.Duration { return c.ct.cfg.ConnectTimeout }

// Dial opens a data socket to the server ("tcp" or "udp") from the
// test's local address, with opts set before it connects.
func (c *Control) Dial(ctx context.Context, network string, opts sockopt.Options) (net.Conn, error) {
	d, err := c.ct.dialer(network, opts, 0)
	if err != nil {
		return nil, err
	}
	conn, err := d.DialContext(ctx, network, c.ct.dataAddr)
	if err != nil {
		return nil, netsetup.DialError(err)
	}
	return conn, nil
}

// ReadReady waits for the server's StreamsReady, or its refusal.
func (c *Control) ReadReady(ready *proto.StreamsReady) error { return c.ct.readReady(ready) }

// ReadReadyUDP is ReadReady for a test whose data path is UDP sockets
// (stream i+1 on conns[i]): each says its hello until the server has them.
func (c *Control) ReadReadyUDP(ready *proto.StreamsReady, conns ...*net.UDPConn) error {
	token, err := proto.ParseToken(c.ct.accept.Token)
	if err != nil {
		return err
	}
	return c.ct.greetUntilReady(token, conns, ready)
}

// Close closes the control connection.
func (c *Control) Close() { c.ct.close() }
