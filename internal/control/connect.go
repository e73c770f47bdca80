package control

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/iperf3/iperf3wire"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
	"github.com/wireperf/wireperf/internal/units"
)

// ClientConfig is how a client reaches a server and has a test accepted:
// every kind of test embeds it in its own configuration.
type ClientConfig struct {
	Host           string
	Port           int
	Bind           string // local address for every connection; "" for any
	ConnectTimeout time.Duration
	// Spec is the test asked for.
	Spec   spec.Spec
	Logger *slog.Logger
	// KeepIperf3, when set, keeps the connection to a server that turns
	// out to speak iperf3: the *Iperf3ServerError then carries it
	// (Server), for the caller to go on in iperf3's protocol. Without it
	// the connection is closed.
	KeepIperf3 bool
	// Auth is the key to prove to a server that requires one.
	Auth *auth.Credential
	// TLS, when set, wraps the control connection; data connections stay
	// plain, bound to the test by its token.
	TLS *tls.Config
	// Family is "4" or "6" (-4, -6): the server's name resolves, and
	// every socket dials, in that family only; "" for either.
	Family string
	// BindDevice is -X: every socket is bound to this interface.
	BindDevice string
	// KeepAlive, when set, is --cntl-ka: TCP keepalive on the control
	// connection.
	KeepAlive *net.KeepAliveConfig
	// ServerOutput asks the server for its own report of the test
	// (--get-server-output).
	ServerOutput bool
	// Format is the client's -f, sent with ServerOutput for the unit of
	// the server's report; the zero Format sends none.
	Format units.Format
}

// Dialing is how the client's sockets are dialled: from -B's address
// (and cport, --cport's first data port, 0 for any), in -4's or -6's
// family, bound to -X's interface, TCP data with -L's flow label.
func (cfg ClientConfig) Dialing(cport int) netsetup.Client {
	return netsetup.Client{
		Bind: cfg.Bind, CPort: cport, Timeout: cfg.ConnectTimeout,
		Family: cfg.Family, BindDevice: cfg.BindDevice, FlowLabel: cfg.Spec.FlowLabel,
		MPTCP: cfg.Spec.MPTCP,
	}
}

// WithDefaults fills the connect timeout and the logger when unset.
func (cfg ClientConfig) WithDefaults() ClientConfig {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = spec.DefaultConnectTO
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// ErrRefused wraps a server's refusal of a test.
var ErrRefused = errors.New("server refused the test")

// Control is a client's control connection once the server has accepted
// its test: what the code of a kind of test builds its data path and its
// exchange on.
type Control struct {
	cfg ClientConfig
	// addr is the server's address as dialled; dataAddr the address the
	// control connection reached, which answered as a wireperf server:
	// every data connection and datagram goes there, so a name is
	// resolved once, and nothing is sent to an address that did not take
	// part in the handshake.
	addr, dataAddr string
	conn           *net.TCPConn // the control connection's TCP
	ctl            net.Conn     // what control frames travel over: conn, or TLS over it
	cc             *controlConn
	fw             *frameWriter
	rtt            time.Duration // of the greeting exchange
	accept         proto.TestAccept
	iperf3         *Iperf3Server // the server answered as iperf3 does
	authed         *auth.Session // the handshake's, when authenticated: signs UDP datagrams
}

// Connect dials the server, greets it and has cfg.Spec accepted: ErrRefused
// when the server refuses, an *Iperf3ServerError when it speaks iperf3
// (with the server kept when cfg.KeepIperf3 asks), or a dial error.
func Connect(ctx context.Context, cfg ClientConfig) (*Control, error) {
	c := &Control{cfg: cfg.WithDefaults()}
	if err := c.handshake(ctx); err != nil {
		if c.iperf3 != nil && c.cfg.KeepIperf3 {
			h := *c.iperf3
			c.conn, c.ctl = nil, nil // h.Conn, when there is one, belongs to the caller now
			c.Close()
			return nil, &Iperf3ServerError{Addr: h.Addr, Server: &h}
		}
		c.Close()
		return nil, err
	}
	return c, nil
}

// TCP is the TCP connection under the control connection (which may be
// TLS over it), for its addresses and options.
func (c *Control) TCP() *net.TCPConn { return c.conn }

// SetDeadline bounds the control connection's reads and writes.
func (c *Control) SetDeadline(t time.Time) error { return c.ctl.SetDeadline(t) }

// Listen starts reading the server's frames once the data path is ready
// (ReadReady). Call it once.
func (c *Control) Listen() Events { return c.cc.events() }

// Send writes a control frame; it is safe from several goroutines.
func (c *Control) Send(typ proto.Type, body any) error { return c.fw.send(typ, body) }

// Accept is the server's acceptance: the token, the server's host and
// limits.
func (c *Control) Accept() proto.TestAccept { return c.accept }

// Addr is the server's address as dialled, host:port.
func (c *Control) Addr() string { return c.addr }

// DataAddr is the address that answered the handshake, where every data
// connection and datagram of the test goes.
func (c *Control) DataAddr() string { return c.dataAddr }

// RTT is the round trip of the greeting exchange.
func (c *Control) RTT() time.Duration { return c.rtt }

// Timeout is the connect timeout, which bounds each step of the set-up.
func (c *Control) Timeout() time.Duration { return c.cfg.ConnectTimeout }

// Auth is the handshake's session when the server asked for a key, nil
// otherwise: it signs a UDP test's datagrams.
func (c *Control) Auth() *auth.Session { return c.authed }

// Dial opens a data socket to the server ("tcp" or "udp") from the
// test's local address, with opts set before it connects.
func (c *Control) Dial(ctx context.Context, network string, opts sockopt.Options) (net.Conn, error) {
	d, err := c.cfg.Dialing(0).DataDialer(network, 0, opts)
	if err != nil {
		return nil, err
	}
	conn, err := d.DialContext(ctx, network, c.dataAddr)
	if err != nil {
		return nil, netsetup.DialError(err)
	}
	return conn, nil
}

// ReadReady waits for the server's StreamsReady, or its refusal.
func (c *Control) ReadReady(ready *proto.StreamsReady) error {
	err := c.cc.expect(ready)
	var pe *PeerError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("server: %s", pe.Message)
	case err != nil:
		return fmt.Errorf("waiting for the server to accept the data connections: %w", err)
	}
	return nil
}

// helloEvery is how often a UDP stream says hello until it is ready.
const helloEvery = 50 * time.Millisecond

// ReadReadyUDP is ReadReady for a test whose data path is UDP sockets
// (stream i+1 on conns[i]): each says its hello from its socket until the
// server reports every stream ready: a hello is one datagram and may be
// lost, the control connection's answer cannot.
func (c *Control) ReadReadyUDP(ready *proto.StreamsReady, conns ...*net.UDPConn) error {
	token, err := proto.ParseToken(c.accept.Token)
	if err != nil {
		return err
	}
	hellos := make([][]byte, len(conns))
	for i := range conns {
		hellos[i] = udpflow.Hello{Token: [16]byte(token), StreamID: uint32(i + 1)}.MarshalHello()
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(helloEvery)
		defer tick.Stop()
		for {
			for i, conn := range conns {
				_, _ = conn.Write(hellos[i])
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err = c.ReadReady(ready)
	close(stop)
	<-stopped // no hello after the answer: the sockets carry the test now
	return err
}

// Close closes the control connection.
func (c *Control) Close() {
	if c.ctl != nil {
		_ = c.ctl.Close()
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// dialer dials network from -B's address and localPort, with opts set
// before connect.
func (c *Control) dialer(network string, opts sockopt.Options, localPort int) (*net.Dialer, error) {
	return c.cfg.Dialing(0).Dialer(network, localPort, opts)
}

func (c *Control) handshake(ctx context.Context) error {
	c.addr = net.JoinHostPort(c.cfg.Host, strconv.Itoa(c.cfg.Port))
	d, err := c.dialer("tcp", sockopt.Options{}, 0)
	if err != nil {
		return err
	}
	dialStart := time.Now()
	conn, err := d.DialContext(ctx, c.cfg.Dialing(0).Network("tcp"), c.addr)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.addr, netsetup.DialError(err))
	}
	dialRTT := time.Since(dialStart)
	c.conn = conn.(*net.TCPConn)
	if ka := c.cfg.KeepAlive; ka != nil {
		if err := c.conn.SetKeepAliveConfig(*ka); err != nil {
			return fmt.Errorf("--cntl-ka on the control connection: %w", err)
		}
	}
	c.dataAddr = c.conn.RemoteAddr().String()
	c.ctl = c.conn
	_ = c.conn.SetDeadline(time.Now().Add(c.cfg.ConnectTimeout))
	if c.cfg.TLS != nil {
		tcfg := c.cfg.TLS
		if tcfg.ServerName == "" && !tcfg.InsecureSkipVerify {
			tcfg = tcfg.Clone()
			tcfg.ServerName = c.cfg.Host
		}
		tc := tls.Client(c.conn, tcfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("TLS with %s: %w", c.addr, err)
		}
		c.ctl = tc
	}
	c.fw = newFrameWriter(c.ctl)
	sent := time.Now()
	var greeting bytes.Buffer
	_ = proto.WriteGreetingVersion(&greeting, proto.MagicControl, c.version(), 0)
	if _, err := c.ctl.Write(greeting.Bytes()); err != nil {
		return fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	flags, err := c.readServerGreeting(dialRTT, greeting.Bytes())
	if err != nil {
		if c.iperf3 != nil && c.cfg.Auth != nil {
			// An iperf3 server cannot prove a key: a client that holds
			// one tests only servers that prove they hold it too.
			c.iperf3 = nil
			return fmt.Errorf("%w: %s is an iperf3 server, which cannot prove it holds the key; refusing to test it", auth.ErrFailed, c.addr)
		}
		return err
	}
	_ = c.conn.SetDeadline(time.Now().Add(c.cfg.ConnectTimeout))
	c.rtt = time.Since(sent)
	c.cc = newControlConn(c.ctl, cliAwaitAccept)
	if flags&proto.FlagAuth != 0 {
		if err := c.authenticate(); err != nil {
			return err
		}
	}
	req := proto.TestRequest{Spec: c.cfg.Spec, Client: flowrun.LocalHost(), ControlRTTNs: int64(c.rtt), ServerOutput: c.cfg.ServerOutput}
	if c.cfg.ServerOutput && c.cfg.Format != 0 {
		req.Format = c.cfg.Format.String()
	}
	if err := c.fw.send(proto.TypeTestRequest, req); err != nil {
		return err
	}
	err = c.cc.expect(&c.accept)
	var pe *PeerError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%w: %s", ErrRefused, pe.Message)
	case err != nil:
		return fmt.Errorf("waiting for the server's answer: %w", err)
	}
	if c.cfg.Auth != nil && c.authed == nil {
		// The server asked for no key, so it proved none: with a key, the
		// test it accepted is not run, whoever answered. (Its refusal,
		// above, is still shown: a busy or address-listed server refuses
		// before any key is asked for.)
		msg := fmt.Sprintf("%s asked for no key, so it did not prove it holds ours; refusing to test it", c.addr)
		_ = c.fw.send(proto.TypeError, proto.Error{Message: "the client holds a key and the server asked for none"})
		return fmt.Errorf("%w: %s", auth.ErrFailed, msg)
	}
	if c.cfg.Spec.Protocol == spec.RR {
		c.cc.branch()
	}
	return nil
}

// authenticate answers the server's challenge with the key, and checks
// that the server holds the key too.
func (c *Control) authenticate() error {
	c.cc.state = cliAwaitAuth
	if c.cfg.Auth == nil {
		return fmt.Errorf("%w: %s requires a key (--auth-key-file)", auth.ErrFailed, c.addr)
	}
	var ch proto.Challenge
	if err := c.cc.expect(&ch); err != nil {
		return fmt.Errorf("%w: %v", auth.ErrFailed, err)
	}
	nonce, err := auth.Nonce()
	if err != nil {
		return err
	}
	cred := c.cfg.Auth
	if err := c.fw.send(proto.TypeAuth, proto.Auth{
		User: cred.User, Nonce: nonce, MAC: auth.ClientProof(cred.Key, ch.Nonce, nonce, cred.User),
	}); err != nil {
		return err
	}
	var ok proto.AuthOK
	if err := c.cc.expect(&ok); err != nil {
		var pe *PeerError
		if errors.As(err, &pe) {
			return fmt.Errorf("%w: the server refused user %q or its key", auth.ErrFailed, cred.User)
		}
		return fmt.Errorf("%w: %v", auth.ErrFailed, err)
	}
	if !cred.CheckServerProof(ch.Nonce, nonce, ok.MAC) {
		return fmt.Errorf("%w: the server does not hold the key", auth.ErrFailed)
	}
	c.authed = &auth.Session{User: cred.User, Key: cred.Key, ServerNonce: ch.Nonce, ClientNonce: nonce}
	return nil
}

// readServerGreeting reads a wireperf server's answer to our greeting and
// tells an iperf3 server apart: an idle one says nothing, a busy one
// answers with a state byte.
// It returns the server's greeting flags.
func (c *Control) readServerGreeting(dialRTT time.Duration, greeting []byte) (uint16, error) {
	wait := min(c.cfg.ConnectTimeout, iperf3wire.ProbeWait(dialRTT))
	if c.cfg.TLS != nil {
		wait = c.cfg.ConnectTimeout // an iperf3 server cannot speak TLS
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, proto.GreetingLen)
	n, err := c.ctl.Read(buf)
	switch {
	case n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && c.cfg.TLS == nil:
		c.iperf3 = &Iperf3Server{Addr: c.addr, Conn: c.conn, Sent: greeting}
		return 0, &Iperf3ServerError{Addr: c.addr}
	case n == 0:
		return 0, fmt.Errorf("greeting %s: %w", c.addr, err)
	case buf[0] != proto.MagicServer[0] && iperf3wire.LooksLikeIperf3Reply(buf[:n]):
		_ = c.conn.Close() // a busy server hangs up; a test needs a new connection
		c.conn, c.ctl = nil, nil
		c.iperf3 = &Iperf3Server{Addr: c.addr}
		return 0, &Iperf3ServerError{Addr: c.addr}
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(c.cfg.ConnectTimeout))
	if _, err := io.ReadFull(c.ctl, buf[n:]); err != nil {
		return 0, fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	if buf[0] != proto.MagicServer[0] {
		// A frame's first byte is never W: the server refused the
		// greeting with an error frame (docs/protocol.md, "The greeting").
		return 0, c.greetingRefused(buf)
	}
	v, err := proto.ParseGreeting(buf, proto.MagicServer)
	if err != nil {
		if errors.Is(err, proto.ErrBadMagic) {
			return 0, fmt.Errorf("%s is not a wireperf server (it answered with something else)", c.addr)
		}
		return 0, fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	if v != c.version() {
		return 0, fmt.Errorf("greeting %s: the server answered protocol version %d to our %d", c.addr, v, c.version())
	}
	return proto.GreetingFlags(buf), nil
}

// version is the protocol version the client greets with: the first,
// unless its test needs a later one (proto.VersionIsochronous).
func (c *Control) version() uint16 {
	if c.cfg.Spec.Isochronous != nil {
		return proto.VersionIsochronous
	}
	return proto.Version
}

// greetingRefused reads the error frame that began with the greeting's
// bytes in head and says why the server refused: a server that predates
// the version an isochronous test needs says it speaks another.
func (c *Control) greetingRefused(head []byte) error {
	f, err := proto.ReadFrame(io.MultiReader(bytes.NewReader(head), c.ctl))
	if err != nil {
		return fmt.Errorf("%s is not a wireperf server (it answered with something else)", c.addr)
	}
	var e proto.Error
	if f.Type != proto.TypeError || f.Decode(&e) != nil {
		return fmt.Errorf("greeting %s: the server answered with a %v frame", c.addr, f.Type)
	}
	if c.version() > proto.Version && strings.Contains(e.Message, proto.ErrWrongVersion.Error()) {
		return fmt.Errorf("%w: %s predates isochronous UDP tests (--isochronous needs a wireperf server that speaks protocol version %d; it said: %s)",
			ErrRefused, c.addr, proto.VersionIsochronous, e.Message)
	}
	return fmt.Errorf("%w: %s", ErrRefused, e.Message)
}

// Iperf3Server is a server that answered as iperf3 does, kept with
// ClientConfig.KeepIperf3. Conn is the open control connection of an idle
// iperf3 server, still waiting for the rest of its cookie after Sent: the
// test can go on there (iperf3.RunClientOn), and whoever receives it must
// close it. Conn is nil when the server answered as a busy iperf3 server.
type Iperf3Server struct {
	Addr string
	Conn *net.TCPConn
	Sent []byte
}

// Iperf3ServerError says the server speaks iperf3, not wireperf. With
// ClientConfig.KeepIperf3, Server is the server and the open connection
// to an idle one, the caller's to close; else the connection is closed.
type Iperf3ServerError struct {
	Addr   string
	Server *Iperf3Server
}

func (e *Iperf3ServerError) Error() string {
	return fmt.Sprintf("%s is an iperf3 server", e.Addr)
}
