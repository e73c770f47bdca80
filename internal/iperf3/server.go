package iperf3

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// UDPMux hands out UDP sockets on the server's shared port;
// internal/udpmux's Mux satisfies it. Expect returns a socket bound to
// the port and connected to the sender of the first datagram that
// matches, with that datagram.
type UDPMux interface {
	Expect(ctx context.Context, match func(payload []byte, from *net.UDPAddr) bool) (conn *net.UDPConn, first []byte, from *net.UDPAddr, err error)
}

// ServeConfig is what the server side of an iperf3 test needs.
type ServeConfig struct {
	// Registry routes data connections to their tests; one per listening
	// port, shared by every Serve call. Required.
	Registry *Registry
	// UDP gives UDP streams their sockets; nil refuses UDP tests.
	UDP UDPMux
	// Admit applies the server's limits once the client's parameters are
	// known; an error refuses the test (the client hears ACCESS_DENIED,
	// as from a busy iperf3 server). release is called when the test ends.
	Admit  func(peer net.Addr, s spec.Spec) (release func(), err error)
	Logger *slog.Logger
	// HandshakeTimeout bounds each step before the test runs (and the
	// wait for the client's answers at the end). Default 10 s.
	HandshakeTimeout time.Duration
	// MaxDuration bounds tests that stop on bytes (-n), whose length the
	// parameters cannot tell; 0 means no bound.
	MaxDuration time.Duration
	// ServerOutput renders the server's record of a test for a client
	// that asks for --get-server-output: JSON, or text when the server
	// runs without -J, as iperf3 does. The caller supplies it so that the
	// protocol never depends on the output formats; nil sends nothing.
	ServerOutput func(res *result.Result, format units.Format) (out []byte, isJSON bool)
	// RefuseAuth refuses every client once its parameters are in, with
	// iperf3's own "test authorization failed": the server requires keys
	// that iperf3 clients cannot present. Auth, when set, is checked
	// instead.
	RefuseAuth bool
	// Meter, when set, is read every MeterEvery while the test runs with
	// the bytes its streams have moved so far, both ways (the server's
	// caps on rates and bytes); an error ends the test with iperf3's
	// SERVER_ERROR, IETOTALRATE for an error that is ErrTotalRate.
	Meter      func(moved int64) error
	MeterEvery time.Duration
	// Auth, when set, admits only clients with iperf3's credentials
	// (--rsa-private-key-path, --authorized-users-path); the others hear
	// "test authorization failed" (SERVER_ERROR 142, as iperf3 3.12's
	// server sends it) and Serve returns an *AuthError.
	Auth *ServerAuth
	// Live, when set, sees the test as it runs: Started once its streams
	// are in, with the server's end as Local, then each of the server's
	// intervals (the client's never reach an iperf3 server).
	Live Observer
}

// SERVER_ERROR codes, iperf3's i_errno values, as iperf3 3.12 prints them.
const (
	errCodeTooManyStreams = 6   // "number of parallel streams too large"
	errCodeNotImplemented = 13  // "an option you are trying to set is not implemented yet"
	errCodeNoSCTP         = 18  // "no SCTP support available"
	errCodeInitTest       = 101 // "test initialization failed"
	errCodeListen         = 102 // "unable to start listener for connections"
	errCodeServerTerm     = 120 // "the server has terminated"
	errCodeCongestion     = 134 // "unable to set TCP_CONGESTION"
	errCodeAuth           = 142 // "test authorization failed"
)

// Registry knows the iperf3 tests a server runs, by cookie, and routes
// their TCP data connections to them. The zero value is not usable; call
// NewRegistry.
type Registry struct {
	mu       sync.Mutex
	tests    map[Cookie]*regEntry
	udpSetup map[string]chan struct{} // per client host: one UDP set-up at a time
}

type regEntry struct {
	peer       string
	collecting bool
	want       int
	conns      []acceptedConn
	ready      chan struct{}
}

type acceptedConn struct {
	conn *net.TCPConn
	at   time.Time
	seq  int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tests: map[Cookie]*regEntry{}, udpSetup: map[string]chan struct{}{}}
}

// Deliver hands a TCP connection whose first 37 bytes were cookie to the
// iperf3 test that waits for its data connections. accepted is when the
// listener accepted the connection: iperf3 tells its streams apart only
// by the order in which they connect, so the test orders them by it (a
// zero time means the order of the Deliver calls). It reports false, and
// the caller keeps the connection, when no test of that cookie is
// collecting connections from that host; the caller should then treat the
// connection as a new control connection (Serve refuses a cookie that is
// already in use, as iperf3 does, with ACCESS_DENIED).
func (r *Registry) Deliver(cookie Cookie, conn *net.TCPConn, accepted time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.tests[cookie]
	if e == nil || !e.collecting || len(e.conns) >= e.want || e.peer != hostOf(conn.RemoteAddr()) {
		return false
	}
	e.conns = append(e.conns, acceptedConn{conn: conn, at: accepted, seq: len(e.conns)})
	if len(e.conns) == e.want {
		close(e.ready)
	}
	return true
}

// IsControl reports whether a connection that opened with cookie starts a
// new test: it is a well-formed iperf3 cookie that no running test has.
func (r *Registry) IsControl(cookie Cookie) bool {
	if !ValidCookie(cookie[:]) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tests[cookie] == nil
}

// Running is how many iperf3 tests are registered.
func (r *Registry) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tests)
}

var errCookieInUse = errors.New("iperf3: a test with this cookie is already running")

func (r *Registry) register(c Cookie, peer string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tests[c] != nil {
		return errCookieInUse
	}
	r.tests[c] = &regEntry{peer: peer, ready: make(chan struct{})}
	return nil
}

// collect opens the test for want data connections.
func (r *Registry) collect(c Cookie, want int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.tests[c]
	e.collecting, e.want = true, want
	return e.ready
}

// taken closes collection and returns the connections in accept order.
func (r *Registry) taken(c Cookie) []*net.TCPConn {
	r.mu.Lock()
	e := r.tests[c]
	e.collecting = false
	conns := e.conns
	e.conns = nil
	r.mu.Unlock()
	sort.SliceStable(conns, func(i, j int) bool {
		if conns[i].at.Equal(conns[j].at) {
			return conns[i].seq < conns[j].seq
		}
		return conns[i].at.Before(conns[j].at)
	})
	out := make([]*net.TCPConn, len(conns))
	for i, ac := range conns {
		out[i] = ac.conn
	}
	return out
}

func (r *Registry) unregister(c Cookie) {
	r.mu.Lock()
	e := r.tests[c]
	delete(r.tests, c)
	r.mu.Unlock()
	if e != nil {
		for _, ac := range e.conns {
			_ = ac.conn.Close()
		}
	}
}

// lockUDP serialises UDP stream set-up per client host: iperf3's UDP
// connect message carries no cookie, so two tests from one host must not
// set up their streams at the same time.
func (r *Registry) lockUDP(ctx context.Context, host string) (unlock func(), err error) {
	r.mu.Lock()
	ch := r.udpSetup[host]
	if ch == nil {
		ch = make(chan struct{}, 1)
		r.udpSetup[host] = ch
	}
	r.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func hostOf(a net.Addr) string {
	switch v := a.(type) {
	case *net.TCPAddr:
		return v.IP.String()
	case *net.UDPAddr:
		return v.IP.String()
	}
	h, _, _ := net.SplitHostPort(a.String())
	return h
}

// Serve runs the server side of one iperf3 test on a control connection
// whose first bytes (first: up to 37, a prefix of the cookie) the caller
// already read. It returns the server's record of the test (Local: the
// server's end; Remote: the client's, from its exchanged results); a test
// refused or broken before it started returns nil. Cancelling ctx ends a
// running test and tells the client (SERVER_TERMINATE). Serve closes conn.
func Serve(ctx context.Context, conn *net.TCPConn, first []byte, cfg ServeConfig) (*result.Result, error) {
	defer conn.Close()
	if cfg.Registry == nil {
		return nil, errors.New("iperf3.Serve: no Registry")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if len(first) > CookieLen {
		return nil, fmt.Errorf("iperf3.Serve: %d bytes already read, a cookie has %d", len(first), CookieLen)
	}
	var cookie Cookie
	copy(cookie[:], first)
	_ = conn.SetDeadline(time.Now().Add(cfg.HandshakeTimeout))
	if _, err := io.ReadFull(conn, cookie[len(first):]); err != nil {
		return nil, fmt.Errorf("reading the iperf3 cookie: %w", err)
	}
	if !ValidCookie(cookie[:]) {
		return nil, fmt.Errorf("not an iperf3 cookie: %q", cookie[:])
	}
	peer := hostOf(conn.RemoteAddr())
	if err := cfg.Registry.register(cookie, peer); err != nil {
		_ = WriteState(conn, AccessDenied)
		return nil, err
	}
	defer cfg.Registry.unregister(cookie)
	t := &serverTest{
		ctx: ctx, cfg: cfg, conn: conn, cookie: cookie, peer: peer,
		log: cfg.Logger.With("iperf3_test", cookie.String()[:8], "client", conn.RemoteAddr().String()),
	}
	res, err := t.run()
	for _, st := range t.streams {
		st.close()
	}
	if t.release != nil {
		t.release()
	}
	return res, err
}

type serverTest struct {
	ctx     context.Context
	cfg     ServeConfig
	log     *slog.Logger
	conn    *net.TCPConn
	cookie  Cookie
	peer    string
	params  Params
	spec    spec.Spec
	streams []*dataStream
	release func()
	states  *stateReader
}

func (t *serverTest) step() { _ = t.conn.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout)) }

// errorLinger bounds how long a test ended by the server keeps its
// streams open after SERVER_ERROR, for the client to read it and leave.
const errorLinger = 2 * time.Second

// failThenAbort ends a running test with SERVER_ERROR: the error first,
// then the streams, as iperf3's server does. The streams stay open until
// the client, having read the error, closes its control connection (or
// errorLinger passes): closing a stream with data still unread sends a
// reset, and a client whose write meets the reset first reports "unable
// to write to stream socket" instead of the server's error. Our senders
// stop at once; the client's block on a full window meanwhile.
func (t *serverTest) failThenAbort(run *flowrun.Runner, code int32, err error) error {
	err = t.fail(code, err)
	run.StopSenders()
	t.states.ask()
	linger := time.NewTimer(errorLinger)
	defer linger.Stop()
	select {
	case r := <-t.states.resp:
		t.states.pending = false
		_ = r // the client's close (or anything it says) ends the wait
	case <-linger.C:
	case <-t.ctx.Done():
	}
	run.Abort()
	return err
}

// fail sends SERVER_ERROR with iperf3's code for the problem.
func (t *serverTest) fail(code int32, err error) error {
	var b [9]byte
	b[0] = stateByte(ServerError)
	binary.BigEndian.PutUint32(b[1:5], uint32(code))
	_, _ = t.conn.Write(b[:])
	return err
}

func (t *serverTest) run() (*result.Result, error) {
	// Until the test runs, a shutdown cuts the handshake short.
	stopHS := context.AfterFunc(t.ctx, func() { _ = t.conn.SetDeadline(time.Now()) })
	t.step()
	if err := WriteState(t.conn, ParamExchange); err != nil {
		return nil, err
	}
	if err := ReadJSON(t.conn, MaxMessage, &t.params); err != nil {
		return nil, fmt.Errorf("reading the iperf3 parameters: %w", err)
	}
	token := t.params.AuthToken
	t.params.AuthToken = "" // kept out of logs and errors
	switch {
	case t.cfg.Auth != nil:
		user, err := t.cfg.Auth.Check(token)
		if err != nil {
			return nil, t.fail(errCodeAuth, err)
		}
		t.log = t.log.With("user", user)
	case t.cfg.RefuseAuth:
		return nil, t.fail(errCodeAuth, errors.New("iperf3 client refused: this server requires a key (--iperf3-open admits iperf3 clients)"))
	}
	s, err := t.params.Spec()
	if err != nil {
		return nil, t.fail(paramsErrCode(t.params, err), fmt.Errorf("iperf3 parameters %s: %w", t.params, err))
	}
	t.spec = s
	if s.Protocol == spec.UDP && t.cfg.UDP == nil {
		return nil, t.fail(errCodeListen, errors.New("iperf3 UDP test refused: this server has no UDP port"))
	}
	if t.cfg.Admit != nil {
		release, err := t.cfg.Admit(t.conn.RemoteAddr(), s)
		if err != nil {
			if code, ok := refusalCode(err); ok { // as iperf3 3.21 refuses the rate or the length asked for
				return nil, t.fail(code, fmt.Errorf("iperf3 test refused: %w", err))
			}
			_ = WriteState(t.conn, AccessDenied)
			return nil, fmt.Errorf("iperf3 test refused: %w", err)
		}
		t.release = release
	}
	if err := t.createStreams(); err != nil {
		return nil, err
	}
	if !stopHS() {
		return nil, errors.New("server shutting down")
	}
	t.step()
	if err := WriteState(t.conn, TestStart); err != nil {
		return nil, err
	}
	res := &result.Result{
		Spec: s, Token: t.cookie.String(), StartedAt: time.Now(), ServerAddr: t.conn.LocalAddr().String(),
		Local:  result.End{Role: result.RoleServer, Host: flowrun.LocalHost(), Limits: netsetup.LimitsFor(t.conn.LocalAddr().String())},
		Remote: result.End{Role: result.RoleClient, Host: peerHost(t.params.ClientVersion)},
	}
	var onInterval func(result.Interval)
	if live := t.cfg.Live; live != nil {
		started := t.liveStart(res)
		roles := result.SenderRolesOf(s)
		live.Started(started)
		onInterval = func(iv result.Interval) { live.Interval(started, result.JoinInterval(&iv, nil, roles)) }
	}
	run := newRunner(s, t.streams, onInterval)
	run.MaxStreamRows = flowrun.ServerStreamRows // the client counts its own rows; the server's record is bounded
	if err := WriteState(t.conn, TestRunning); err != nil {
		return nil, err
	}
	_ = t.conn.SetDeadline(time.Time{})
	_ = t.conn.SetKeepAlive(true)
	_ = t.conn.SetKeepAlivePeriod(5 * time.Second)
	t.log.Info("iperf3 test started", "protocol", s.Protocol, "streams", s.Streams, "reverse", s.Reverse, "bidir", s.Bidir, "duration", s.Duration, "bytes", s.Bytes)
	t.states = newStateReader(t.conn)
	defer t.states.close()
	run.Start()
	testErr := t.wait(run)
	waitDone(run, finishTimeout)
	if t.cfg.Meter != nil {
		_ = t.cfg.Meter(t.moved()) // the bytes since its last read count too
	}
	end, mine := finish(run, t.streams, result.RoleServer)
	end.Limits = res.Local.Limits // read when the test started
	end.ConcurrentTests = max(t.cfg.Registry.Running()-1, 0)
	res.Local = end
	if testErr == nil {
		testErr = t.exchange(res, mine)
	}
	if testErr == nil {
		testErr = run.FirstError()
	}
	if testErr != nil {
		res.Error = testErr.Error()
		res.Local.Error = res.Error
	}
	t.log.Info("iperf3 test finished", "error", res.Error)
	return res, testErr
}

// liveStart is the server's record of the test as it starts, for a live
// observer: its streams on both ends.
func (t *serverTest) liveStart(res *result.Result) *result.Result {
	r := *res
	r.Local.Streams, r.Remote.Streams = nil, nil
	for _, st := range t.streams {
		r.Local.Streams = append(r.Local.Streams, result.Stream{
			ID: st.id, Sender: st.sender, Socket: st.socket, LocalAddr: st.local, RemoteAddr: st.remote,
		})
		r.Remote.Streams = append(r.Remote.Streams, result.Stream{
			ID: st.id, Sender: !st.sender, LocalAddr: st.remote, RemoteAddr: st.local,
		})
	}
	return &r
}

func paramsErrCode(p Params, err error) int32 {
	switch {
	case p.SCTP:
		return errCodeNoSCTP
	case p.Parallel > spec.MaxStreams:
		return errCodeTooManyStreams
	case errors.Is(err, ErrUnsupported):
		return errCodeNotImplemented
	}
	return errCodeInitTest
}

// createStreams tells the client to open its streams and takes them.
func (t *serverTest) createStreams() error {
	want := t.spec.DataConns()
	if t.spec.Protocol == spec.UDP {
		return t.createUDP(want)
	}
	ready := t.cfg.Registry.collect(t.cookie, want)
	t.step()
	if err := WriteState(t.conn, CreateStreams); err != nil {
		return err
	}
	timer := time.NewTimer(t.cfg.HandshakeTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case <-timer.C:
		_ = t.cfg.Registry.taken(t.cookie) // unregister closes them
		return t.fail(errCodeInitTest, fmt.Errorf("iperf3 client opened too few of its %d data connections within %v", want, t.cfg.HandshakeTimeout))
	case <-t.ctx.Done():
		return t.fail(errCodeServerTerm, errors.New("server shutting down"))
	}
	for i, c := range t.cfg.Registry.taken(t.cookie) {
		id := i + 1
		sender := !t.spec.ClientSendsOn(id)
		if err := netsetup.SetupAccepted(c, t.spec, id, sender); err != nil {
			_ = c.Close()
			code := int32(errCodeInitTest)
			if t.spec.Congestion != "" {
				code = errCodeCongestion
			}
			return t.fail(code, fmt.Errorf("data connection %d: %w", id, err))
		}
		t.streams = append(t.streams, newTCPStream(id, sender, c, flowrun.GrantedSocket(c, t.spec), t.spec))
	}
	return nil
}

func (t *serverTest) createUDP(want int) error {
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.HandshakeTimeout)
	defer cancel()
	unlock, err := t.cfg.Registry.lockUDP(ctx, t.peer)
	if err != nil {
		return t.fail(errCodeInitTest, fmt.Errorf("waiting for another UDP test from %s to set up: %w", t.peer, err))
	}
	defer unlock()
	t.step()
	if err := WriteState(t.conn, CreateStreams); err != nil {
		return err
	}
	peerIP := t.conn.RemoteAddr().(*net.TCPAddr).IP
	counters64 := t.params.UDPCounters64 != 0
	for id := 1; id <= want; id++ {
		uc, _, _, err := t.cfg.UDP.Expect(ctx, func(p []byte, from *net.UDPAddr) bool {
			return IsUDPConnect(p) && from.IP.Equal(peerIP)
		})
		if err != nil {
			return t.fail(errCodeInitTest, fmt.Errorf("UDP stream %d of %d did not arrive: %w", id, want, err))
		}
		sender := !t.spec.ClientSendsOn(id)
		o := netsetup.UDPOptions(t.spec, !sender)
		if raw, err := uc.SyscallConn(); err == nil && o != (sockopt.Options{}) {
			if err := sockopt.Apply(raw, o); err != nil {
				_ = uc.Close()
				return t.fail(errCodeInitTest, fmt.Errorf("UDP stream %d: %w", id, err))
			}
		}
		if _, err := uc.Write(UDPConnectReply[:]); err != nil {
			_ = uc.Close()
			return t.fail(errCodeInitTest, fmt.Errorf("UDP stream %d: %w", id, err))
		}
		u := newUDPStream(uc, sender, counters64, t.spec)
		t.streams = append(t.streams, newUDPDataStream(id, u, flowrun.UDPSocket(uc, t.spec, sender)))
	}
	return nil
}

// wait runs the test until the client says TEST_END (nil), or the test
// fails: the client goes away or ends it, the server shuts down, or the
// test overruns its time.
func (t *serverTest) wait(run *flowrun.Runner) error {
	var limit <-chan time.Time
	if d := t.limit(); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		limit = timer.C
	}
	meterC, stopMeter := t.meterTicker()
	defer stopMeter()
	t.states.ask()
	for {
		select {
		case <-meterC:
			if err := t.cfg.Meter(t.moved()); err != nil {
				return t.failThenAbort(run, capErrCode(err), err)
			}
			continue
		case r := <-t.states.resp:
			t.states.pending = false
			switch {
			case r.err != nil:
				run.Abort()
				return fmt.Errorf("iperf3 client went away: %w", r.err)
			case r.state == TestEnd:
				run.StopSenders()
				rtt := netsetup.SmoothedRTT(t.conn)
				if t.spec.Protocol == spec.UDP {
					run.DrainReceivers(netsetup.DrainTime(t.spec, rtt))
					return nil
				}
				// An iperf3 client keeps its streams open until the results
				// are shown, so no close ends the drain: what it sent before
				// TEST_END has arrived once nothing has for a retransmission
				// timeout and two round trips.
				run.DrainReceiversUntilQuiet(tcpQuietAfter(rtt), netsetup.TCPDrainLimit)
				return nil
			case r.state == ClientTerminate:
				run.Abort()
				return errors.New("the iperf3 client ended the test (CLIENT_TERMINATE)")
			default:
				run.Abort()
				return fmt.Errorf("iperf3 client sent %v during the test", r.state)
			}
		case <-limit:
			run.Abort()
			_ = t.fail(errCodeInitTest, nil)
			return errors.New("iperf3 test overran its time; stopped")
		case <-t.ctx.Done():
			run.Abort()
			_ = WriteState(t.conn, ServerTerminate)
			return errors.New("aborted: server shutting down")
		}
	}
}

// limit is how long the server lets a test run: its time and omitted
// start plus a margin, or the server's maximum for -n tests.
func (t *serverTest) limit() time.Duration {
	if t.spec.Duration > 0 {
		d := t.spec.Omit + t.spec.Duration + 30*time.Second
		if t.spec.Bytes > 0 && t.cfg.MaxDuration > 0 {
			d = max(d, t.cfg.MaxDuration)
		}
		return d
	}
	return t.cfg.MaxDuration
}

// exchange swaps results with the client, fills the Remote end, sends
// our results (with our output if asked) and closes the test.
func (t *serverTest) exchange(res *result.Result, mine Results) error {
	t.step()
	if err := WriteState(t.conn, ExchangeResults); err != nil {
		return fmt.Errorf("sending EXCHANGE_RESULTS: %w", err)
	}
	raw, err := ReadMessage(t.conn, MaxMessage)
	if err != nil {
		return fmt.Errorf("reading the iperf3 client's results: %w", err)
	}
	var theirs Results
	if err := json.Unmarshal(raw, &theirs); err != nil || !theirs.present(raw) {
		return fmt.Errorf("the iperf3 client's results are malformed: %q", truncate(raw, 200))
	}
	res.Remote = remoteEnd(result.RoleClient, peerHost(t.params.ClientVersion), theirs, t.spec, res.Local.Streams)
	if t.params.GetServerOutput != 0 {
		t.addOutput(&mine, res)
	}
	if err := WriteJSON(t.conn, mine); err != nil {
		return fmt.Errorf("sending our results: %w", err)
	}
	if err := WriteState(t.conn, DisplayResults); err != nil {
		return fmt.Errorf("sending DISPLAY_RESULTS: %w", err)
	}
	// The client answers IPERF_DONE; one that just hangs up is fine too.
	if st, err := ReadState(t.conn); err == nil && st != IperfDone {
		t.log.Debug("iperf3 client ended with an unexpected state", "state", st)
	}
	return nil
}

// addOutput renders the server's record of the test for
// --get-server-output, in the layout our emitters give any test.
func (t *serverTest) addOutput(mine *Results, res *result.Result) {
	if t.cfg.ServerOutput == nil {
		return
	}
	out, isJSON := t.cfg.ServerOutput(res, 0) // iperf3's client sends no -f: the server's own units
	switch {
	case !isJSON:
		mine.ServerOutputText = string(out)
	case json.Valid(out):
		mine.ServerOutputJSON = json.RawMessage(bytes.TrimSpace(out))
	}
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// tcpQuietAfter is how long a TCP receiver must get nothing before what
// the peer sent is taken to have arrived: Linux's minimum retransmission
// timeout, for a segment lost at the end, and two round trips.
func tcpQuietAfter(rtt time.Duration) time.Duration {
	return 200*time.Millisecond + 2*rtt
}
