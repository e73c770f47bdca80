package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

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
	// Meter, when set, is read every MeterEvery while the test runs with
	// the bytes its streams have moved so far, both ways (the server's
	// caps on rates and bytes); an error ends the test, its text the
	// reason the client is told.
	Meter      func(moved int64) error
	MeterEvery time.Duration
}

// Registrar admits tests under the server's limits and routes data
// connections to them by token.
type Registrar interface {
	Admit(peer net.Addr, s spec.Spec) (*Admission, error)
}

// ServeConfig is how a server admits tests on its control connections.
type ServeConfig struct {
	Registrar        Registrar
	Logger           *slog.Logger
	HandshakeTimeout time.Duration
	// MaxDuration bounds tests that stop on bytes (-n), whose length the
	// spec cannot tell; 0 means no bound.
	MaxDuration time.Duration
	// UDP hands out the server's UDP port to UDP streams; nil refuses UDP.
	UDP UDPExpecter
	// Keys, when set, are the users a client must prove it is one of.
	Keys auth.Keys
	// HandshakeDone is called once the client has authenticated and sent
	// a well-formed request: the connection is past the handshake.
	HandshakeDone func()
	// ServerOutput renders the server's record of a bulk test for a
	// client that asks for it (--get-server-output): text, or JSON when
	// isJSON, text in the unit of the client's -f (the request's Format;
	// the zero Format for the server's default). nil sends none.
	ServerOutput func(r *result.Result, format units.Format) (out []byte, isJSON bool)
	// Refuse, when set, turns the client away with its reason right after
	// the greeting (an address the server does not admit).
	Refuse error
}

// UDPExpecter gives a stream a socket of its own on the server's UDP port
// once its first datagram arrives (internal/udpmux).
type UDPExpecter interface {
	Expect(ctx context.Context, match func(payload []byte, from *net.UDPAddr) bool) (*net.UDPConn, []byte, *net.UDPAddr, error)
}

// AuthError is a client that failed authentication.
type AuthError struct {
	User   string
	Reason string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%v for user %q: %s", auth.ErrFailed, e.User, e.Reason)
}

func (e *AuthError) Unwrap() error { return auth.ErrFailed }

// Accept runs the server's side of a control connection's handshake,
// whose first four bytes (the magic) were already read: the greeting, the
// key, the test request and its admission. It returns the admitted test
// for the code of its kind to run (session.ServeBulk, or rrcontrol.Serve
// for a request-response test), which must Release it; a test refused
// here returns nil and the refusal, told to the client. conn may be a TLS
// connection over TCP.
func Accept(ctx context.Context, conn net.Conn, cfg ServeConfig) (*AdmittedTest, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	hs := cfg.HandshakeTimeout
	if hs == 0 {
		hs = 10 * time.Second
	}
	_ = conn.SetDeadline(time.Now().Add(hs))
	fw := newFrameWriter(conn)
	var rest [proto.GreetingLen - 4]byte
	if _, err := io.ReadFull(conn, rest[:]); err != nil {
		return nil, fmt.Errorf("reading greeting: %w", err)
	}
	version, err := proto.ParseGreeting(append(proto.MagicControl[:], rest[:]...), proto.MagicControl)
	if err != nil {
		_ = fw.send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	if cfg.Refuse != nil {
		// The request is read first: closing on unread bytes would reset
		// the connection, and the client would never see the reason.
		if err := proto.WriteGreetingVersion(conn, proto.MagicServer, version, 0); err == nil {
			if _, err := proto.ReadFrame(conn); err == nil {
				_ = fw.send(proto.TypeError, proto.Error{Message: cfg.Refuse.Error()})
			}
		}
		return nil, cfg.Refuse
	}
	var flags uint16
	first := srvAwaitRequest
	if cfg.Keys != nil {
		flags |= proto.FlagAuth
		first = srvAwaitAuth
	}
	if err := proto.WriteGreetingVersion(conn, proto.MagicServer, version, flags); err != nil {
		return nil, err
	}
	cc := newControlConn(conn, first)
	var authed *auth.Session
	if cfg.Keys != nil {
		var err error
		if authed, err = authenticate(cc, fw, cfg.Keys); err != nil {
			return nil, err
		}
		log = log.With("user", authed.User)
	}
	var req proto.TestRequest
	err = cc.expect(&req)
	if err == nil {
		err = req.Spec.Validate()
	}
	if err == nil && req.Spec.Isochronous != nil && version < proto.VersionIsochronous {
		err = fmt.Errorf("--isochronous needs protocol version %d, and the client greeted with %d", proto.VersionIsochronous, version)
	}
	if err != nil {
		_ = fw.send(proto.TypeError, proto.Error{Message: "bad test request: " + err.Error()})
		return nil, err
	}
	if cfg.HandshakeDone != nil {
		cfg.HandshakeDone()
	}
	adm, err := cfg.Registrar.Admit(conn.RemoteAddr(), req.Spec)
	if err != nil {
		_ = fw.send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	at := &AdmittedTest{
		Conn: conn, Request: req, Admission: adm, Config: cfg, Handshake: hs, Auth: authed, fw: fw, cc: cc,
		Log: log.With("test", adm.Token.String()[:8], "client", conn.RemoteAddr().String()),
	}
	if req.Spec.Protocol == spec.RR { // request-response: internal/rr/rrcontrol runs it
		cc.branch()
	}
	return at, nil
}

// authenticate challenges the client and checks its answer: a fresh nonce
// per connection, so a recorded answer is worth nothing.
func authenticate(cc *controlConn, fw *frameWriter, keys auth.Keys) (*auth.Session, error) {
	nonce, err := auth.Nonce()
	if err != nil {
		return nil, err
	}
	if err := fw.send(proto.TypeChallenge, proto.Challenge{Nonce: nonce}); err != nil {
		return nil, err
	}
	var a proto.Auth
	if err := cc.expect(&a); err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) && pe.Got == proto.TypeTestRequest {
			_ = fw.send(proto.TypeError, proto.Error{Message: "authentication failed: this server requires a key (--auth-key-file)"})
			return nil, &AuthError{Reason: "the client sent no key"}
		}
		return nil, &AuthError{Reason: fmt.Sprintf("no answer to the challenge (a client without a key?): %v", err)}
	}
	key, ok := keys.Verify(a.User, nonce, a.Nonce, a.MAC)
	if !ok {
		_ = fw.send(proto.TypeError, proto.Error{Message: "authentication failed"})
		return nil, &AuthError{User: a.User, Reason: "wrong user or key"}
	}
	if err := fw.send(proto.TypeAuthOK, proto.AuthOK{MAC: auth.ServerProof(key, nonce, a.Nonce, a.User)}); err != nil {
		return nil, err
	}
	return &auth.Session{User: a.User, Key: key, ServerNonce: nonce, ClientNonce: a.Nonce}, nil
}

// AdmittedTest is a test the server admitted (Accept), for the code of
// its kind to run: session.ServeBulk, or rrcontrol.Serve. The handshake's
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
	// Auth is the handshake's session when the client authenticated, nil
	// otherwise: it signs a UDP test's datagrams.
	Auth *auth.Session
	fw   *frameWriter
	cc   *controlConn
}

// Release frees the test's slot on the server and forgets its token.
func (t *AdmittedTest) Release() { t.Admission.Release() }

// ControlRTT is the client's measure of the control round trip.
func (t *AdmittedTest) ControlRTT() time.Duration { return time.Duration(t.Request.ControlRTTNs) }

// Send writes a control frame; it is safe from several goroutines.
func (t *AdmittedTest) Send(typ proto.Type, body any) error { return t.fw.send(typ, body) }

// SendWithin is Send under the bound d instead of WriteTimeout: a final
// word on the way out of a test, to a peer that may not be reading.
func (t *AdmittedTest) SendWithin(typ proto.Type, body any, d time.Duration) error {
	return t.fw.sendWithin(typ, body, d)
}

// ShortenWrites cuts a write in progress to d from now, without waiting
// for it: the way out of a test must not wait for a peer that stopped
// reading.
func (t *AdmittedTest) ShortenWrites(d time.Duration) { t.fw.shorten(d) }

// Abort tells the client why its test ends, within a short bound: a peer
// that broke the protocol may not be reading.
func (t *AdmittedTest) Abort(reason string) {
	t.fw.shorten(AbortWrite)
	_ = t.fw.sendWithin(proto.TypeError, proto.Error{Message: reason}, AbortWrite)
}

// TCP is the TCP connection under Conn, for its addresses and options.
func (t *AdmittedTest) TCP() *net.TCPConn { return rawTCP(t.Conn) }

// Listen starts reading the client's frames; clock requests are answered
// as they arrive. Call it once, after the handshake.
func (t *AdmittedTest) Listen() Events {
	t.cc.answerClock = func(q proto.ClockRequest, at time.Time) error {
		return t.fw.send(proto.TypeClockReply, proto.ClockReply{T1: q.T1, T2: at.UnixNano(), T3: time.Now().UnixNano()})
	}
	_ = t.Conn.SetReadDeadline(time.Time{})
	return t.cc.events()
}

// rawTCP is the TCP connection under a control connection, TLS or not.
func rawTCP(c net.Conn) *net.TCPConn {
	for {
		n, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = n.NetConn()
	}
	tc, _ := c.(*net.TCPConn)
	return tc
}
