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

	"github.com/wireperf/wireperf/internal/auth"
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
	// Keys, when set, are the users a client must prove it is one of.
	Keys auth.Keys
	// HandshakeDone is called once the client has authenticated and sent
	// a well-formed request: the connection is past the handshake.
	HandshakeDone func()
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

// abortWrite bounds the last words to a client on the way out of an
// aborted test.
const abortWrite = 250 * time.Millisecond

// Accept runs the server's side of a control connection's handshake,
// whose first four bytes (the magic) were already read: the greeting, the
// key, the test request and its admission. It returns the admitted test
// for the code of its kind to run (ServeBulk, or rrcontrol.Serve for a
// request-response test), which must Release it; a test refused here
// returns nil and the refusal, told to the client. conn may be a TLS
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
	if _, err := proto.ParseGreeting(append(proto.MagicControl[:], rest[:]...), proto.MagicControl); err != nil {
		_ = fw.send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	if cfg.Refuse != nil {
		// The request is read first: closing on unread bytes would reset
		// the connection, and the client would never see the reason.
		if err := proto.WriteGreeting(conn, proto.MagicServer); err == nil {
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
	if err := proto.WriteGreetingFlags(conn, proto.MagicServer, flags); err != nil {
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
	err := cc.expect(&req)
	if err == nil {
		err = req.Spec.Validate()
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
		Conn: conn, Request: req, Admission: adm, Config: cfg, Handshake: hs, fw: fw, cc: cc, authed: authed,
		Log: log.With("test", adm.Token.String()[:8], "client", conn.RemoteAddr().String()),
	}
	if req.Spec.Protocol == spec.RR { // request-response: internal/rr/rrcontrol runs it
		cc.branch()
	}
	return at, nil
}

// ServeBulk runs an admitted bulk test (TCP or UDP streams) to its end
// and returns the server's record of it. Cancelling ctx aborts it and
// tells the client.
func ServeBulk(ctx context.Context, at *AdmittedTest) (*result.Result, error) {
	if at.Request.Spec.Protocol == spec.RR {
		at.Abort("a request-response test is not a bulk test")
		return nil, errors.New("a request-response test handed to the bulk test's server")
	}
	t := &serverTest{AdmittedTest: at, ctx: ctx, authed: at.authed}
	res, err := t.run(at.Request.Client)
	for _, f := range t.flows {
		_ = f.Close()
	}
	return res, err
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

// serverTest is a bulk test (TCP or UDP streams) on the server: what
// every admitted test has, and the streams' side of it.
type serverTest struct {
	*AdmittedTest
	ctx   context.Context
	flows []flowrun.Flow
	// authed is the handshake's, when authenticated: it signs UDP datagrams.
	authed *auth.Session
	// clockStopped says the server's own clock had to end the test, and
	// clientSpoke that the client said Stop or SenderDone at some point:
	// a client that was late but is there still gets its full ending.
	clockStopped, clientSpoke bool
}

func (t *serverTest) run(client result.Host) (*result.Result, error) {
	res := &result.Result{Spec: t.Request.Spec, Token: t.Admission.Token.String(), StartedAt: time.Now()}
	res.Remote = result.End{Role: result.RoleClient, Host: client}
	// Read once: the end report carries the same limits.
	limits := netsetup.LimitsFor(t.Conn.LocalAddr().String())
	if err := t.fw.send(proto.TypeTestAccept, proto.TestAccept{
		Token: t.Admission.Token.String(), Server: flowrun.LocalHost(), Limits: limits,
	}); err != nil {
		return nil, err
	}
	// From here the client may only start, or hang up: the reader watches
	// the control connection while the data connections arrive, and the
	// set-up's own timers bound the wait, so that a client that is too
	// slow hears why.
	_ = t.Conn.SetReadDeadline(time.Time{})
	t.cc.readLoop()
	sockets, err := t.collectStreams()
	if err == nil {
		err = t.awaitStart()
	}
	if err != nil {
		// Each write has its own deadline: the set-up's may have passed.
		_ = t.fw.send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	if tc := rawTCP(t.Conn); tc != nil {
		_ = tc.SetKeepAlive(true)
		_ = tc.SetKeepAlivePeriod(5 * time.Second)
	}
	t.Log.Info("test started", "streams", t.Request.Spec.Streams, "reverse", t.Request.Spec.Reverse, "bidir", t.Request.Spec.Bidir, "duration", t.Request.Spec.Duration)

	run := flowrun.New(t.Request.Spec, t.flows, sockets, func(iv result.Interval) {
		_ = t.fw.send(proto.TypeInterval, iv)
	})
	run.Start()
	testErr := t.wait(run, t.cc)
	if testErr != nil || t.abandoned() {
		// The client is gone or misbehaving: its streams' last figures
		// are not worth waiting for its socket buffers to drain.
		for _, f := range t.flows {
			_ = f.Close()
		}
	}
	end := run.Finish(result.RoleServer)
	end.Limits = limits
	end.ConcurrentTests = t.Admission.Concurrent()
	if testErr == nil {
		testErr = run.FirstError()
	}
	if testErr != nil {
		end.Error = testErr.Error()
		res.Error = testErr.Error()
	}
	res.Local = end
	within := writeTimeout
	if testErr != nil {
		within = abortWrite
	}
	if err := t.fw.sendWithin(proto.TypeEndReport, withoutIntervals(end), within); err == nil && testErr == nil {
		t.awaitEndReport(res)
	}
	t.Log.Info("test finished", "error", res.Error, slog.Group("flows", summaryAttrs(res)...))
	return res, testErr
}

// awaitStart waits for the client's Start once the streams are ready.
func (t *serverTest) awaitStart() error {
	timer := time.NewTimer(t.Handshake)
	defer timer.Stop()
	select {
	case <-t.cc.started:
		return nil
	case err := <-t.cc.lost:
		return fmt.Errorf("waiting for start: %w", err)
	case <-timer.C:
		return fmt.Errorf("waiting for start: nothing within %v", t.Handshake)
	case <-t.ctx.Done():
		return errors.New("server shutting down")
	}
}

// awaitEndReport takes the client's final report for the server's record.
// The client sends it once its own receivers have drained; a client that
// the server's clock had to stop gets a second.
func (t *serverTest) awaitEndReport(res *result.Result) {
	wait := min(endReportTimeout, netsetup.DrainTime(t.Request.Spec, t.ControlRTT())+time.Second+4*t.ControlRTT())
	if t.abandoned() {
		wait = time.Second
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ce := <-t.cc.end:
		res.Remote = ce
	case <-t.cc.lost:
		// The client hangs up right after its report: both may be ready.
		select {
		case ce := <-t.cc.end:
			res.Remote = ce
		default:
		}
	case <-timer.C:
	case <-t.ctx.Done():
	}
}

// collectStreams waits for every data connection of the test, applies
// the spec's socket options to each and tells the client they are ready.
func (t *serverTest) collectStreams() (map[int]result.Socket, error) {
	var ready proto.StreamsReady
	var err error
	if t.Request.Spec.Protocol == spec.UDP {
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
	want := t.Request.Spec.DataConns()
	seen := map[int]bool{}
	timer := time.NewTimer(t.Handshake)
	defer timer.Stop()
	for len(t.flows) < want {
		select {
		case dc := <-t.Admission.Data:
			id := int(dc.StreamID)
			if id < 1 || id > want || seen[id] {
				_ = dc.Conn.Close()
				return fmt.Errorf("data connection with bad stream ID %d", id)
			}
			seen[id] = true
			if err := netsetup.SetupAccepted(dc.Conn, t.Request.Spec, !t.Request.Spec.ClientSendsOn(id)); err != nil {
				_ = dc.Conn.Close()
				return fmt.Errorf("server: %w", err)
			}
			st, err := newTCPStream(id, !t.Request.Spec.ClientSendsOn(id), dc.Conn, t.Request.Spec)
			if err != nil {
				_ = dc.Conn.Close()
				return fmt.Errorf("server: %w", err)
			}
			t.flows = append(t.flows, flowrun.NewTCPFlow(st, t.Request.Spec.Length, t.Request.Spec.TimelinePeriod()))
			ready.Streams = append(ready.Streams, proto.ServerStream{
				ID: id, LocalAddr: dc.Conn.LocalAddr().String(), RemoteAddr: dc.Conn.RemoteAddr().String(),
				Socket: flowrun.GrantedSocket(dc.Conn, t.Request.Spec),
			})
		case <-timer.C:
			return fmt.Errorf("only %d of %d data connections arrived within %v", len(t.flows), want, t.Handshake)
		case err := <-t.cc.lost:
			t.cc.lost <- err // for awaitStart's sake; the test ends here anyway
			return fmt.Errorf("set-up: %w", err)
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
	if t.Config.UDP == nil {
		return errors.New("this server does not serve UDP")
	}
	peer := t.Conn.RemoteAddr().(*net.TCPAddr).IP
	ctx, cancel := context.WithTimeout(t.ctx, t.Handshake)
	defer cancel()
	// A client that hangs up during set-up frees its slot at once.
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case err := <-t.cc.lost:
			t.cc.lost <- err
			cancel()
		case <-watchDone:
		}
	}()
	type got struct {
		id   int
		conn *net.UDPConn
		err  error
	}
	want := t.Request.Spec.DataConns()
	ch := make(chan got, want)
	for id := 1; id <= want; id++ {
		go func() {
			conn, _, _, err := t.Config.UDP.Expect(ctx, func(p []byte, from *net.UDPAddr) bool {
				h, ok := udpflow.ParseHello(p)
				return ok && h.Token == [16]byte(t.Admission.Token) && int(h.StreamID) == id && from.IP.Equal(peer)
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
		f, err := flowrun.NewUDPFlow(g.conn, t.Request.Spec, [16]byte(t.Admission.Token), g.id, !t.Request.Spec.ClientSendsOn(g.id), t.authed.DatagramKey([16]byte(t.Admission.Token)))
		if err != nil {
			_ = g.conn.Close()
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		t.flows = append(t.flows, f)
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: g.id, LocalAddr: g.conn.LocalAddr().String(), RemoteAddr: g.conn.RemoteAddr().String(),
			Socket: flowrun.UDPSocket(g.conn, t.Request.Spec, f.Sender()),
		})
	}
	return firstErr
}

// wait runs the test until every flow has finished: the client's Stop
// ends the server's senders, the client's SenderDone lets the server's
// receivers drain, and a lost client or a shutdown aborts the test. The
// server keeps its own clock too (see clock): a client that never stops
// its test, or stops reading, doesn't keep it running.
func (t *serverTest) wait(run *flowrun.Runner, control *controlConn) error {
	soft, hard := t.clock()
	var softC, hardC <-chan time.Time
	if soft > 0 {
		st, ht := time.NewTimer(soft), time.NewTimer(hard)
		defer st.Stop()
		defer ht.Stop()
		softC, hardC = st.C, ht.C
	}
	done := run.Done()
	sendersDone := run.SendersDone()
	peerSent := false
	for {
		select {
		case <-done:
			if sendersDone != nil { // done and sendersDone were ready at once
				_ = t.fw.send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			}
			return nil
		case <-control.stop:
			t.clientSpoke = true
			run.StopSenders()
		case <-sendersDone:
			_ = t.fw.send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			sendersDone = nil
		case sent := <-control.senderDoneC:
			peerSent, t.clientSpoke = true, true
			run.SetPeerSent(sent)
			run.DrainReceivers(netsetup.DrainTime(t.Request.Spec, t.ControlRTT()))
		case <-softC:
			t.clockStopped = true
			run.StopSenders()
			if !t.clientSpoke {
				t.Log.Warn("the client did not end its test on time; the server's clock stops it")
				t.fw.shorten(abortWrite) // a client this late may not be reading either
			}
			if !peerSent {
				run.DrainReceivers(clockDrain)
			}
			softC = nil
		case <-hardC:
			t.clockStopped = true
			run.Abort()
			<-done
			return errors.New("the test outlived the server's clock; aborted")
		case err := <-control.lost:
			if t.ctx.Err() != nil {
				continue // the shutdown case says why
			}
			var pe *ProtocolError
			if errors.As(err, &pe) {
				_ = t.fw.sendWithin(proto.TypeError, proto.Error{Message: pe.Error()}, abortWrite)
			}
			run.Abort()
			<-done
			return fmt.Errorf("client went away: %w", err)
		case <-t.ctx.Done():
			t.fw.shorten(abortWrite)
			_ = t.fw.sendWithin(proto.TypeError, proto.Error{Message: "server shutting down: test aborted"}, abortWrite)
			run.Abort()
			<-done
			return errors.New("aborted: server shutting down")
		}
	}
}

// abandoned says the client left the server's clock to end its test and
// never said a word about it: its ending is not worth waiting for.
func (t *serverTest) abandoned() bool { return t.clockStopped && !t.clientSpoke }

// clockGrace is how long past a test's length the server waits for the
// client's Stop before its own clock stops the senders: the Stop is on its
// way for a round trip at most, since the server started half a round
// trip after the client.
func clockGrace(rtt time.Duration) time.Duration {
	return min(time.Second+2*rtt, 1500*time.Millisecond)
}

// clockDrain is how long the receivers go on once the server's clock has
// stopped a test whose client said nothing.
const clockDrain = 2 * time.Second

// clock is when, from the start, the server stops a test's senders
// itself (soft), and when it aborts whatever still runs (hard): the
// client's length plus a grace, or the server's maximum for tests that
// stop on bytes. 0 means no clock.
func (t *serverTest) clock() (soft, hard time.Duration) {
	soft = t.Config.MaxDuration
	if t.Request.Spec.Duration > 0 {
		soft = t.Request.Spec.Duration + t.Request.Spec.Omit + clockGrace(t.ControlRTT())
	}
	if soft <= 0 {
		return 0, 0
	}
	return soft, soft + max(clockDrain, netsetup.DrainTime(t.Request.Spec, t.ControlRTT())) + time.Second
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

func summaryAttrs(r *result.Result) []any {
	var out []any
	for _, d := range r.Directions() {
		out = append(out, slog.Group(d.Label(),
			"sent_bytes", d.Sent.Bytes, "received_bytes", d.Received.Bytes,
			"received_bps", d.Received.BitsPerSecond()))
	}
	return out
}
