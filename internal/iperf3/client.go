package iperf3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// Observer sees a client's test as it runs. The remote end of an iperf3
// test reports only at the end, so interval rows carry the local end's
// figures only.
type Observer = result.Observer

// ClientConfig is what a client needs to run a test against an iperf3
// server.
type ClientConfig struct {
	Host           string
	Port           int
	Bind           string // local address for every connection; "" for any
	CPort          int    // first data connection's local port (--cport); 0 for any
	ConnectTimeout time.Duration
	Spec           spec.Spec
	Observer       Observer
	Logger         *slog.Logger
	// RetryBusy keeps retrying a busy server (it answers ACCESS_DENIED
	// while it runs another client's test) with exponential backoff,
	// for up to this long; 0 gives up at once.
	RetryBusy time.Duration
	// UDPCounters64 asks for 64-bit UDP sequence numbers
	// (--udp-counters-64bit).
	UDPCounters64 bool
	// Family is "4" or "6" (-4, -6): the server's name resolves, and
	// every socket dials, in that family only; "" for either.
	Family string
	// BindDevice is -X: every socket is bound to this interface.
	BindDevice string
	// KeepAlive, when set, is --cntl-ka: TCP keepalive on the control
	// connection.
	KeepAlive *net.KeepAliveConfig
	// ServerCPU is -A's m: the CPU the server pins itself to; nil for
	// none.
	ServerCPU *int
	// RcvTimeout ends the test with an error when the client's
	// receiving streams get nothing for this long (--rcv-timeout); 0
	// for no bound.
	RcvTimeout time.Duration
	// File is -F: a one-stream TCP test's sender sends its bytes, a
	// receiver writes what it receives to it; nil for none.
	File io.ReadWriter
	// GetServerOutput asks the server for its own report of the test
	// (iperf3's get_server_output).
	GetServerOutput bool
	// Auth, when set, sends iperf3's credentials with the parameters
	// (--username, --rsa-public-key-path).
	Auth *Credentials
}

// dialing is how the client's sockets are dialled (netsetup.Client).
func (cfg ClientConfig) dialing() netsetup.Client {
	return netsetup.Client{
		Bind: cfg.Bind, CPort: cfg.CPort, Timeout: cfg.ConnectTimeout,
		Family: cfg.Family, BindDevice: cfg.BindDevice, FlowLabel: cfg.Spec.FlowLabel,
		MPTCP: cfg.Spec.MPTCP,
	}
}

// Retry backoff for a busy server.
const (
	busyFirstWait = 500 * time.Millisecond
	busyMaxWait   = 5 * time.Second
)

// finishTimeout bounds the wait for the streams to end once they were
// told to stop (a receiver that does not hear the end is aborted), and
// resultsTimeout the wait for the peer's answers at the end.
const (
	finishTimeout  = 3 * time.Second
	resultsTimeout = 15 * time.Second
)

// RunClient runs one test against an iperf3 server. The server's results
// become the Remote end of the Result. Cancelling ctx ends the test early
// but cleanly. The result is non-nil whenever the test started, even if it
// failed part-way; its Error then says why.
func RunClient(ctx context.Context, cfg ClientConfig) (*result.Result, error) {
	cfg = withDefaults(cfg)
	if err := checkSpec(cfg.Spec); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(cfg.RetryBusy)
	wait := busyFirstWait
	sawBusy := false
	for {
		res, err := runClient(ctx, cfg, nil, nil, 0)
		// Between two tests iperf3 closes its listening socket and opens
		// a new one: a server that was busy a moment ago may refuse the
		// next connection for a few milliseconds. That is busy too.
		retry := errors.Is(err, ErrBusy) || sawBusy && errors.Is(err, syscall.ECONNREFUSED)
		if !retry || cfg.RetryBusy <= 0 || time.Now().Add(wait).After(deadline) {
			return res, err
		}
		sawBusy = true
		cfg.Logger.Info("iperf3 server is busy; retrying", "server", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), "in", wait)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, busyMaxWait)
	}
}

// RunClientOn runs a test on a control connection that is already open
// and on which sent (fewer than 37 bytes, e.g. wireperf's native greeting)
// went out without an answer: it completes iperf3's 37-byte cookie with
// sent as its first bytes. If the peer then does not answer as iperf3
// does, the error wraps ErrNotIperf3. It closes conn.
func RunClientOn(ctx context.Context, conn *net.TCPConn, sent []byte, cfg ClientConfig) (*result.Result, error) {
	if len(sent) >= CookieLen {
		_ = conn.Close()
		return nil, fmt.Errorf("RunClientOn: %d bytes already sent, a cookie has %d", len(sent), CookieLen)
	}
	cookie := cookieAfter(sent)
	cfg = withDefaults(cfg)
	if err := checkSpec(cfg.Spec); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return runClient(ctx, cfg, conn, &cookie, len(sent))
}

// checkSpec refuses what iperf3's protocol cannot carry, before a test:
// a TOS per stream (iperf3 sends one --tos for every stream, and its
// server would mark none of its sockets with the others).
func checkSpec(s spec.Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if len(s.StreamTOS) > 0 {
		return errors.New("iperf3's protocol has no TOS per stream (one --tos marks every stream); the test was not run")
	}
	return nil
}

func withDefaults(cfg ClientConfig) ClientConfig {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = spec.DefaultConnectTO
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Spec.Protocol == "" {
		cfg.Spec.Protocol = spec.TCP
	}
	// iperf3 counts whole seconds.
	cfg.Spec.Duration = time.Duration(wholeSeconds(cfg.Spec.Duration)) * time.Second
	cfg.Spec.Omit = time.Duration(wholeSeconds(cfg.Spec.Omit)) * time.Second
	if cfg.Spec.Protocol == spec.UDP {
		cfg.Spec.Rate = udpRate(cfg.Spec) // what the server is told, and what we pace at
		cfg.Spec.PPS, cfg.Spec.Spacing = 0, 0
	}
	return cfg
}

type clientTest struct {
	cfg     ClientConfig
	spec    spec.Spec
	log     *slog.Logger
	addr    string
	conn    *net.TCPConn
	cookie  Cookie
	resumed bool // the cookie's first bytes went out before us
	sent    int  // how many
	streams []*dataStream
	res     *result.Result
	states  *stateReader
}

func runClient(ctx context.Context, cfg ClientConfig, conn *net.TCPConn, cookie *Cookie, sent int) (*result.Result, error) {
	c := &clientTest{cfg: cfg, spec: cfg.Spec, log: cfg.Logger, conn: conn, sent: sent}
	c.addr = net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	if conn != nil {
		c.addr = conn.RemoteAddr().String()
	}
	if cookie != nil {
		c.cookie, c.resumed = *cookie, true
	} else {
		c.cookie = NewCookie()
	}
	defer c.close()
	if err := c.handshake(ctx); err != nil {
		return nil, err
	}
	return c.run(ctx)
}

// dialer dials network from -B's address and localPort, with o set
// before connect.
func (c *clientTest) dialer(network string, localPort int, o sockopt.Options) (*net.Dialer, error) {
	return c.cfg.dialing().DataDialer(network, localPort, o)
}

func (c *clientTest) stepDeadline() { _ = c.conn.SetDeadline(time.Now().Add(c.cfg.ConnectTimeout)) }

// handshake runs the test's set-up until the server says TEST_RUNNING.
func (c *clientTest) handshake(ctx context.Context) error {
	if c.conn == nil {
		d, err := c.cfg.dialing().Dialer("tcp", 0, sockopt.Options{})
		if err != nil {
			return err
		}
		conn, err := d.DialContext(ctx, c.cfg.dialing().Network("tcp"), c.addr)
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", c.addr, netsetup.DialError(err))
		}
		c.conn = conn.(*net.TCPConn)
		if ka := c.cfg.KeepAlive; ka != nil {
			if err := c.conn.SetKeepAliveConfig(*ka); err != nil {
				return fmt.Errorf("--cntl-ka on the control connection: %w", err)
			}
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Now()) })
	defer stop()
	c.stepDeadline()
	if _, err := c.conn.Write(c.cookie[c.sent:]); err != nil {
		return fmt.Errorf("sending the cookie to %s: %w", c.addr, err)
	}
	// sentAuth: the next state answers the parameters that carried our
	// credentials.
	first, sentAuth := true, false
	for {
		c.stepDeadline()
		st, err := ReadState(c.conn)
		if err != nil {
			if first && c.resumed {
				return fmt.Errorf("%w (%v)", ErrNotIperf3, err)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if sentAuth && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
				// iperf3 3.21's server, refusing credentials, hangs up
				// when no earlier test left it an error code to send
				// (3.12's sends code 142).
				return fmt.Errorf("iperf3 server %s closed the connection after our credentials: test authorization failed (user, password or key not the server's, or clocks further apart than its --time-skew-threshold)", c.addr)
			}
			return fmt.Errorf("iperf3 server %s: %w", c.addr, err)
		}
		if first && c.resumed && st != ParamExchange && st != AccessDenied {
			return fmt.Errorf("%w (it sent %v)", ErrNotIperf3, st)
		}
		first = false
		answersAuth := sentAuth
		sentAuth = false
		c.log.Debug("iperf3 state", "state", st)
		switch st {
		case ParamExchange:
			p := ParamsFromSpec(c.spec, c.cfg.UDPCounters64)
			if c.cfg.ServerCPU != nil {
				cpu := Int(*c.cfg.ServerCPU)
				p.ServerAffinity = &cpu
			}
			if c.cfg.GetServerOutput {
				p.GetServerOutput = 1
			}
			if c.cfg.Auth != nil {
				tok, err := c.cfg.Auth.Token(time.Now())
				if err != nil {
					return fmt.Errorf("--username: %w", err)
				}
				p.AuthToken = tok
				sentAuth = true
			}
			if err := WriteJSON(c.conn, p); err != nil {
				return fmt.Errorf("sending parameters: %w", err)
			}
		case CreateStreams:
			if err := c.connectStreams(ctx); err != nil {
				return err
			}
		case TestStart:
		case TestRunning:
			return nil
		case AccessDenied:
			return &BusyError{Addr: c.addr}
		case ServerError:
			err := readServerError(c.conn)
			if re, ok := err.(*RemoteError); ok {
				re.AnswersCredentials = answersAuth
			}
			return err
		case ServerTerminate:
			return fmt.Errorf("iperf3 server %s ended the test before it started", c.addr)
		default:
			return fmt.Errorf("iperf3 server %s sent %v during set-up", c.addr, st)
		}
	}
}

func (c *clientTest) connectStreams(ctx context.Context) error {
	for id := 1; id <= c.spec.DataConns(); id++ {
		sender := c.spec.ClientSendsOn(id)
		var st *dataStream
		var err error
		if c.spec.Protocol == spec.UDP {
			st, err = c.connectUDP(ctx, id, sender)
		} else {
			st, err = c.connectTCP(ctx, id, sender)
		}
		if err != nil {
			return err
		}
		c.streams = append(c.streams, st)
	}
	return nil
}

func (c *clientTest) connectTCP(ctx context.Context, id int, sender bool) (*dataStream, error) {
	cl := netsetup.Client{Bind: c.cfg.Bind, CPort: c.cfg.CPort, Timeout: c.cfg.ConnectTimeout}
	d, err := c.dialer("tcp", cl.DataPort(id), netsetup.TCPOptions(c.spec, true, sender))
	if err != nil {
		return nil, err
	}
	conn, err := d.DialContext(ctx, c.cfg.dialing().Network("tcp"), c.addr)
	if err != nil {
		return nil, fmt.Errorf("data connection %d to %s: %w", id, c.addr, netsetup.DialError(err))
	}
	tc := conn.(*net.TCPConn)
	netsetup.SetNagle(tc, c.spec)
	_ = tc.SetWriteDeadline(time.Now().Add(c.cfg.ConnectTimeout))
	if _, err := tc.Write(c.cookie[:]); err != nil {
		_ = tc.Close()
		return nil, fmt.Errorf("data connection %d: %w", id, err)
	}
	_ = tc.SetWriteDeadline(time.Time{})
	st := tcpflow.NewStream(id, sender, tc)
	if c.cfg.File != nil {
		st.UseFile(c.cfg.File)
	}
	return newTCPStreamWith(st, flowrun.GrantedSocket(tc, c.spec), c.spec), nil
}

func (c *clientTest) connectUDP(ctx context.Context, id int, sender bool) (*dataStream, error) {
	cl := netsetup.Client{Bind: c.cfg.Bind, CPort: c.cfg.CPort, Timeout: c.cfg.ConnectTimeout}
	d, err := c.dialer(c.cfg.dialing().Network("udp"), cl.DataPort(id), netsetup.UDPOptions(c.spec, !sender))
	if err != nil {
		return nil, err
	}
	conn, err := d.DialContext(ctx, c.cfg.dialing().Network("udp"), c.addr)
	if err != nil {
		return nil, fmt.Errorf("UDP stream %d to %s: %w", id, c.addr, netsetup.DialError(err))
	}
	uc := conn.(*net.UDPConn)
	if sender {
		if err := netsetup.CheckUDPPacing(c.spec, uc.LocalAddr().String()); err != nil {
			_ = uc.Close()
			return nil, err
		}
	}
	fail := func(err error) (*dataStream, error) {
		_ = uc.Close()
		return nil, fmt.Errorf("UDP stream %d to %s: %w", id, c.addr, err)
	}
	if _, err := uc.Write(UDPConnectMsg[:]); err != nil {
		return fail(err)
	}
	_ = uc.SetReadDeadline(time.Now().Add(c.cfg.ConnectTimeout))
	var b [64]byte
	n, err := uc.Read(b[:])
	if err != nil {
		return fail(fmt.Errorf("no answer to the UDP connect message: %w", err))
	}
	if !IsUDPConnectReply(b[:n]) {
		return fail(fmt.Errorf("unexpected answer %q to the UDP connect message", b[:n]))
	}
	_ = uc.SetReadDeadline(time.Time{})
	u := newUDPStream(uc, sender, c.cfg.UDPCounters64, c.spec)
	return newUDPDataStream(id, u, flowrun.UDPSocket(uc, c.spec, sender)), nil
}

// run moves data from TEST_RUNNING to the end of the test.
func (c *clientTest) run(ctx context.Context) (*result.Result, error) {
	host, port := c.cfg.Host, c.cfg.Port
	if c.resumed {
		host, port = netsetup.SplitHostPort(c.addr)
	}
	res := &result.Result{
		Spec: c.spec, Token: c.cookie.String(), StartedAt: time.Now(), ControlMSS: netsetup.ControlMSS(c.conn),
		ServerAddr: c.addr, ConnectHost: host, ConnectPort: port,
		Local:  result.End{Role: result.RoleClient, Host: flowrun.LocalHost()},
		Remote: result.End{Role: result.RoleServer, Host: peerHost("")},
	}
	for _, st := range c.streams {
		res.Local.Streams = append(res.Local.Streams, result.Stream{
			ID: st.id, Sender: st.sender, Socket: st.socket, LocalAddr: st.local, RemoteAddr: st.remote,
		})
		res.Remote.Streams = append(res.Remote.Streams, result.Stream{
			ID: st.id, Sender: !st.sender, LocalAddr: st.remote, RemoteAddr: st.local,
		})
	}
	res.Local.Limits = netsetup.StreamLimits(res.Local.Streams)
	c.res = res
	if c.cfg.Observer != nil {
		c.cfg.Observer.Started(res)
	}
	roles := result.SenderRolesOf(c.spec)
	run := newRunner(c.spec, c.streams, func(iv result.Interval) {
		if c.cfg.Observer != nil {
			c.cfg.Observer.Interval(res, result.JoinInterval(&iv, nil, roles))
		}
	})
	_ = c.conn.SetDeadline(time.Time{})
	if ka := c.cfg.KeepAlive; ka != nil { // --cntl-ka, set when it connected
		_ = c.conn.SetKeepAliveConfig(*ka)
	} else {
		_ = c.conn.SetKeepAlive(true)
		_ = c.conn.SetKeepAlivePeriod(5 * time.Second)
	}
	c.states = newStateReader(c.conn)
	run.Start()
	testErr := c.wait(ctx, run)

	// The end: results both ways, then DISPLAY_RESULTS and IPERF_DONE.
	if testErr == nil {
		c.settle()
		testErr = c.sendState(TestEnd)
	}
	waitDone(run, finishTimeout)
	end, mine := finish(run, c.streams, result.RoleClient)
	end.Limits = c.res.Local.Limits // read once the streams connected
	var theirs *Results
	if testErr == nil {
		theirs, testErr = c.exchangeResults(mine)
	}
	res.Local = end
	if theirs != nil {
		res.Remote = remoteEnd(result.RoleServer, peerHost(""), *theirs, c.spec, end.Streams)
		if theirs.ServerOutputText != "" || len(theirs.ServerOutputJSON) > 0 {
			res.ServerOutput = &result.ServerOutput{Text: theirs.ServerOutputText, JSON: theirs.ServerOutputJSON}
		}
	} else {
		res.Remote.Streams = nil
	}
	if testErr == nil {
		testErr = run.FirstError()
	}
	if testErr != nil {
		res.Error = testErr.Error()
	}
	return res, testErr
}

// wait runs the test until it ends on time, on bytes, on cancellation,
// when the streams end by themselves, or on the server's word. A clean
// end returns nil with the senders stopped; a failure aborts the streams.
func (c *clientTest) wait(ctx context.Context, run *flowrun.Runner) error {
	var timeUp <-chan time.Time
	if c.spec.Duration > 0 {
		t := time.NewTimer(c.spec.Duration)
		defer t.Stop()
		timeUp = t.C
	}
	var bytesTick <-chan time.Time
	var sendersDone, receiversDone <-chan struct{}
	nSend := 0
	for _, st := range c.streams {
		if st.sender {
			nSend++
		}
	}
	if nSend > 0 {
		sendersDone = run.SendersDone()
	}
	if nSend < len(c.streams) {
		receiversDone = run.ReceiversDone()
		if c.spec.Bytes > 0 {
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			bytesTick = t.C
		}
	}
	var idle <-chan struct{}
	if c.cfg.RcvTimeout > 0 {
		idle = run.ReceiversIdle(c.cfg.RcvTimeout)
	}
	c.states.ask()
	for {
		select {
		case <-idle: // --rcv-timeout, as iperf3's client ends a test that receives nothing
			run.Abort()
			return fmt.Errorf("no data received for %v (--rcv-timeout)", c.cfg.RcvTimeout)
		case <-timeUp:
		case <-sendersDone:
		case <-receiversDone:
		case <-ctx.Done():
			c.log.Info("test interrupted")
		case <-bytesTick:
			if received(c.streams) < c.spec.Bytes {
				continue
			}
		case r := <-c.states.resp:
			c.states.pending = false
			run.Abort()
			switch {
			case r.err != nil:
				return fmt.Errorf("lost the control connection: %w", r.err)
			case r.state == ServerTerminate:
				return errors.New("the iperf3 server ended the test (SERVER_TERMINATE)")
			case r.state == ServerError:
				return readServerError(c.conn)
			default:
				return fmt.Errorf("iperf3 server sent %v during the test", r.state)
			}
		}
		run.StopSenders()
		run.DrainReceivers(c.drain())
		return nil
	}
}

// settle gives our last UDP datagrams time to arrive before TEST_END:
// an iperf3 server stops counting the moment it reads TEST_END.
func (c *clientTest) settle() {
	if !c.spec.ClientSends() {
		return
	}
	if c.spec.Protocol != spec.UDP {
		c.settleTCP()
		return
	}
	rtt := netsetup.SmoothedRTT(c.conn)
	time.Sleep(min(max(2*rtt, 10*time.Millisecond), 250*time.Millisecond))
}

// settleTCPLimit bounds settleTCP's wait.
const settleTCPLimit = 2 * time.Second

// settleTCP: a TCP test that ends on its bytes (-n, -k, -F) waits until
// the server has acknowledged every byte before TEST_END, which the
// server acts on at once: with the last blocks still in flight, a short
// test's count (and -F's file) would come up short on its side. A test
// that ends on time is cut where it is, as iperf3's is.
func (c *clientTest) settleTCP() {
	if c.spec.Bytes <= 0 {
		return
	}
	deadline := time.Now().Add(settleTCPLimit)
	for _, st := range c.streams {
		if !st.sender || st.tcp == nil {
			continue
		}
		for time.Now().Before(deadline) {
			n, err := st.tcp.Unacked()
			if err != nil || n == 0 {
				break
			}
			time.Sleep(time.Millisecond) // bounded poll: the socket's send queue, until the deadline above
		}
	}
}

// drain is how long receivers read on after the end: a TCP receiver
// reads until the server closes its side, a UDP one a few round trips.
func (c *clientTest) drain() time.Duration {
	return netsetup.DrainTime(c.spec, netsetup.SmoothedRTT(c.conn))
}

// waitDone waits for every stream to finish, aborting them after limit.
func waitDone(run *flowrun.Runner, limit time.Duration) {
	done := run.Done()
	select {
	case <-done:
	case <-time.After(limit):
		run.Abort()
		<-done
	}
}

func (c *clientTest) sendState(s State) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(resultsTimeout))
	if err := WriteState(c.conn, s); err != nil {
		return fmt.Errorf("sending %v: %w", s, err)
	}
	return nil
}

// nextState waits for the server's next state byte.
func (c *clientTest) nextState(timeout time.Duration) (State, error) {
	c.states.ask()
	select {
	case r := <-c.states.resp:
		c.states.pending = false
		return r.state, r.err
	case <-time.After(timeout):
		_ = c.conn.SetDeadline(time.Now())
		r := <-c.states.resp
		c.states.pending = false
		if r.err == nil {
			return r.state, nil
		}
		return 0, fmt.Errorf("no answer from the server within %v", timeout)
	}
}

func (c *clientTest) exchangeResults(mine Results) (*Results, error) {
	st, err := c.nextState(resultsTimeout)
	if err != nil {
		return nil, fmt.Errorf("waiting for the server's results: %w", err)
	}
	switch st {
	case ExchangeResults:
	case ServerError:
		return nil, readServerError(c.conn)
	default:
		return nil, fmt.Errorf("iperf3 server sent %v instead of EXCHANGE_RESULTS", st)
	}
	_ = c.conn.SetDeadline(time.Now().Add(resultsTimeout))
	if err := WriteJSON(c.conn, mine); err != nil {
		return nil, fmt.Errorf("sending our results: %w", err)
	}
	var theirs Results
	if err := ReadJSON(c.conn, MaxResultsWithOutput, &theirs); err != nil {
		return nil, fmt.Errorf("reading the server's results: %w", err)
	}
	_ = c.conn.SetDeadline(time.Time{})
	if st, err := c.nextState(resultsTimeout); err == nil && st == DisplayResults {
		_ = c.sendState(IperfDone)
	}
	return &theirs, nil
}

func (c *clientTest) close() {
	for _, st := range c.streams {
		st.close()
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
	if c.states != nil {
		c.states.close()
	}
}
