package session

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
)

// What session hands to the code of a kind of test it does not run
// itself (request-response, internal/rr/rrcontrol): the control
// connection once the handshake is done, on either end, and the few
// facts every kind reports the same way.

// EndReportTimeout bounds the wait for the peer's final report.
const EndReportTimeout = endReportTimeout

// AdmittedTest is a test the server admitted, handed over by Serve to
// the ServeConfig function of its kind. The handshake's deadline is
// still set on Conn.
type AdmittedTest struct {
	Conn      *net.TCPConn
	Request   proto.TestRequest
	Admission *Admission
	Config    ServeConfig
	Log       *slog.Logger
	// Handshake is how long each step of the set-up may take.
	Handshake time.Duration
	fw        *frameWriter
}

// Send writes a control frame; it is safe from several goroutines.
func (t *AdmittedTest) Send(typ proto.Type, body any) error { return t.fw.send(typ, body) }

// ServeKind runs an admitted test of one kind and returns the server's
// record of it, as Serve does.
type ServeKind func(ctx context.Context, t *AdmittedTest) (*result.Result, error)

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

// Conn is the control connection.
func (c *Control) Conn() *net.TCPConn { return c.ct.conn }

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
	conn, err := d.DialContext(ctx, network, c.ct.addr)
	if err != nil {
		return nil, netsetup.DialError(err)
	}
	return conn, nil
}

// ReadReady waits for the server's StreamsReady, or its refusal.
func (c *Control) ReadReady(ready *proto.StreamsReady) error { return c.ct.readReady(ready) }

// Close closes the control connection.
func (c *Control) Close() { c.ct.close() }
