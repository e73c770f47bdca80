// Package session runs the test lifecycle on both ends: parameter
// exchange, synchronised start, interval reports, stop, and the exchange
// of each end's final report. The data streams themselves are driven by
// internal/flowrun.
package session

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
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/iperf3/iperf3wire"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// Observer sees a client's test as it runs.
type Observer = result.Observer

// ClientConfig is what a client needs to run a test.
type ClientConfig struct {
	Host           string
	Port           int
	Bind           string // local address for every connection; "" for any
	CPort          int    // first data connection's local port; 0 for any
	ConnectTimeout time.Duration
	Spec           spec.Spec
	Observer       Observer
	Logger         *slog.Logger
	// KeepIperf3, when set, keeps the connection to a server that turns
	// out to speak iperf3: RunClient's *Iperf3ServerError then carries it
	// (Server), for the caller to go on in iperf3's protocol. Without it
	// the connection is closed.
	KeepIperf3 bool
	// Auth is the key to prove to a server that requires one.
	Auth *auth.Credential
	// TLS, when set, wraps the control connection; data connections stay
	// plain, bound to the test by its token.
	TLS *tls.Config
	// StartGate, when set, is called once every data connection is up and
	// before Start is sent: a group test's agent holds its streams there
	// until the common start instant. An error closes the test unstarted.
	StartGate func(context.Context) error
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

// withDefaults fills the connect timeout and the logger when unset.
func (cfg ClientConfig) withDefaults() ClientConfig {
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

// RunClient runs one test against a server. Cancelling ctx ends the test
// early but cleanly: both ends stop, drain and report what they measured.
// The returned result is non-nil whenever the test started, even when it
// failed part-way; its Error then says why.
func RunClient(ctx context.Context, cfg ClientConfig) (*result.Result, error) {
	cfg = cfg.withDefaults()
	c := &clientTest{cfg: cfg, spec: cfg.Spec}
	defer c.close()
	if err := c.handshake(ctx); err != nil {
		if c.iperf3 != nil && cfg.KeepIperf3 {
			h := *c.iperf3
			c.conn, c.ctl = nil, nil // h.Conn, when there is one, belongs to the caller now
			return nil, &Iperf3ServerError{Addr: h.Addr, Server: &h}
		}
		return nil, err
	}
	if err := c.connectStreams(ctx); err != nil {
		return nil, err
	}
	if cfg.StartGate != nil {
		_ = c.conn.SetDeadline(time.Time{}) // the wait is the gate's to bound
		if err := cfg.StartGate(ctx); err != nil {
			return nil, err
		}
		c.res.StartedAt = time.Now()
	}
	return c.run(ctx)
}

type clientTest struct {
	cfg  ClientConfig
	spec spec.Spec
	addr string
	// dataAddr is the address the control connection reached, which
	// answered as a wireperf server: every data connection and datagram
	// goes there, so a name is resolved once, and nothing is sent to an
	// address that did not take part in the handshake.
	dataAddr string
	conn     *net.TCPConn // the control connection's TCP
	ctl      net.Conn     // what control frames travel over: conn, or TLS over it
	cc       *controlConn
	fw       *frameWriter
	rtt      time.Duration // of the greeting exchange
	accept   proto.TestAccept
	flows    []flowrun.Flow
	sockets  map[int]result.Socket
	res      *result.Result
	iperf3   *Iperf3Server // the server answered as iperf3 does
	authed   *auth.Session // the handshake's, when authenticated: signs UDP datagrams
}

// dialer dials network from -B's address and localPort, with opts set
// before connect.
func (c *clientTest) dialer(network string, opts sockopt.Options, localPort int) (*net.Dialer, error) {
	return netsetup.Client{Bind: c.cfg.Bind, CPort: c.cfg.CPort, Timeout: c.cfg.ConnectTimeout}.Dialer(network, localPort, opts)
}

func (c *clientTest) handshake(ctx context.Context) error {
	c.addr = net.JoinHostPort(c.cfg.Host, strconv.Itoa(c.cfg.Port))
	d, err := c.dialer("tcp", sockopt.Options{}, 0)
	if err != nil {
		return err
	}
	dialStart := time.Now()
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.addr, netsetup.DialError(err))
	}
	dialRTT := time.Since(dialStart)
	c.conn = conn.(*net.TCPConn)
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
	_ = proto.WriteGreeting(&greeting, proto.MagicControl)
	if _, err := c.ctl.Write(greeting.Bytes()); err != nil {
		return fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	flags, err := c.readServerGreeting(dialRTT, greeting.Bytes())
	if err != nil {
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
	if err := c.fw.send(proto.TypeTestRequest, proto.TestRequest{Spec: c.spec, Client: flowrun.LocalHost(), ControlRTTNs: int64(c.rtt)}); err != nil {
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
	if c.spec.Protocol == spec.RR {
		c.cc.branch()
	}
	return nil
}

// authenticate answers the server's challenge with the key, and checks
// that the server holds the key too.
func (c *clientTest) authenticate() error {
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

// readServerGreeting reads a wireperf server's answer to our greeting and
// tells an iperf3 server apart: an idle one says nothing, a busy one
// answers with a state byte.
// It returns the server's greeting flags.
func (c *clientTest) readServerGreeting(dialRTT time.Duration, greeting []byte) (uint16, error) {
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
	if _, err := proto.ParseGreeting(buf, proto.MagicServer); err != nil {
		if errors.Is(err, proto.ErrBadMagic) {
			return 0, fmt.Errorf("%s is not a wireperf server (it answered with something else)", c.addr)
		}
		return 0, fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	return proto.GreetingFlags(buf), nil
}

func (c *clientTest) connectStreams(ctx context.Context) error {
	token, err := proto.ParseToken(c.accept.Token)
	if err != nil {
		return err
	}
	c.sockets = map[int]result.Socket{}
	var ready proto.StreamsReady
	if c.spec.Protocol == spec.UDP {
		err = c.connectUDP(ctx, token, &ready)
	} else {
		err = c.connectTCP(ctx, token, &ready)
	}
	if err != nil {
		return err
	}
	c.res = &result.Result{
		Spec: c.spec, Token: c.accept.Token, StartedAt: time.Now(), ControlRTT: c.rtt,
		ServerAddr: c.addr, ConnectHost: c.cfg.Host, ConnectPort: c.cfg.Port,
		Local:  result.End{Role: result.RoleClient, Host: flowrun.LocalHost()},
		Remote: result.End{Role: result.RoleServer, Host: c.accept.Server, Limits: c.accept.Limits},
	}
	for _, f := range c.flows {
		local, remote := f.Addrs()
		c.res.Local.Streams = append(c.res.Local.Streams, result.Stream{
			ID: f.ID(), Sender: f.Sender(), Socket: c.sockets[f.ID()], LocalAddr: local, RemoteAddr: remote,
		})
	}
	c.res.Local.Limits = netsetup.StreamLimits(c.res.Local.Streams)
	for _, ss := range ready.Streams {
		c.res.Remote.Streams = append(c.res.Remote.Streams, result.Stream{
			ID: ss.ID, Sender: !c.spec.ClientSendsOn(ss.ID), Socket: ss.Socket,
			LocalAddr: ss.LocalAddr, RemoteAddr: ss.RemoteAddr,
		})
	}
	return nil
}

func (c *clientTest) connectTCP(ctx context.Context, token proto.Token, ready *proto.StreamsReady) error {
	// The data connections are dialled side by side: one after another,
	// each takes a round trip, and at a long RTT many streams would not
	// all connect within the server's handshake timeout (64 streams at
	// 215 ms take 14 s). A caller whose thread is in another network
	// namespace than the process's dials from that thread, one after
	// another: other threads would open their sockets elsewhere.
	n := c.spec.DataConns()
	sequential := n == 1 || !threadsShareNetns()
	type dialed struct {
		flow   flowrun.Flow
		socket result.Socket
		err    error
	}
	out := make([]dialed, n+1)
	sem := make(chan struct{}, maxDialsAtOnce)
	var wg sync.WaitGroup
	for id := 1; id <= n; id++ {
		if sequential {
			out[id].flow, out[id].socket, out[id].err = c.dialTCP(ctx, token, id)
			if out[id].err != nil {
				break
			}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[id].flow, out[id].socket, out[id].err = c.dialTCP(ctx, token, id)
		}()
	}
	wg.Wait()
	for id := 1; id <= n; id++ {
		if out[id].flow != nil {
			c.flows = append(c.flows, out[id].flow)
			c.sockets[id] = out[id].socket
		}
	}
	for id := 1; id <= n; id++ {
		if out[id].err != nil {
			return out[id].err
		}
	}
	return c.readReady(ready)
}

// maxDialsAtOnce bounds the data connections dialled side by side.
const maxDialsAtOnce = 16

// dialTCP opens data connection id and says hello on it.
func (c *clientTest) dialTCP(ctx context.Context, token proto.Token, id int) (flowrun.Flow, result.Socket, error) {
	d, err := c.dialer("tcp", netsetup.TCPOptions(c.spec, true, c.spec.ClientSendsOn(id)), c.localPort(id))
	if err != nil {
		return nil, result.Socket{}, err
	}
	conn, err := d.DialContext(ctx, "tcp", c.dataAddr)
	if err != nil {
		return nil, result.Socket{}, fmt.Errorf("data connection %d to %s: %w", id, c.addr, netsetup.DialError(err))
	}
	tc := conn.(*net.TCPConn)
	netsetup.SetNagle(tc, c.spec)
	st, err := newTCPStream(id, c.spec.ClientSendsOn(id), tc, c.spec)
	if err != nil {
		_ = tc.Close()
		return nil, result.Socket{}, err
	}
	flow := flowrun.NewTCPFlow(st, c.spec.Length, c.spec.TimelinePeriod())
	if _, err := tc.Write(proto.DataHello{Token: token, StreamID: uint32(id)}.Marshal()); err != nil {
		return flow, result.Socket{}, fmt.Errorf("data connection %d: %w", id, err)
	}
	return flow, flowrun.GrantedSocket(tc, c.spec), nil
}

// connectUDP opens each stream's socket and says hello from it until the
// server reports every stream ready: a hello is one datagram and may be
// lost, the control connection's answer cannot.
func (c *clientTest) connectUDP(ctx context.Context, token proto.Token, ready *proto.StreamsReady) error {
	var conns []*net.UDPConn
	for id := 1; id <= c.spec.DataConns(); id++ {
		d, err := c.dialer("udp", sockopt.Options{}, c.localPort(id))
		if err != nil {
			return err
		}
		conn, err := d.DialContext(ctx, "udp", c.dataAddr)
		if err != nil {
			return fmt.Errorf("UDP stream %d to %s: %w", id, c.addr, netsetup.DialError(err))
		}
		uc := conn.(*net.UDPConn)
		f, err := flowrun.NewUDPFlow(uc, c.spec, [16]byte(token), id, c.spec.ClientSendsOn(id), c.authed.DatagramKey([16]byte(token)))
		if err != nil {
			_ = uc.Close()
			return fmt.Errorf("UDP stream %d: %w", id, err)
		}
		c.flows = append(c.flows, f)
		c.sockets[id] = flowrun.UDPSocket(uc, c.spec, f.Sender())
		conns = append(conns, uc)
	}
	return c.greetUntilReady(token, conns, ready)
}

// helloEvery is how often a UDP stream says hello until it is ready.
const helloEvery = 50 * time.Millisecond

// greetUntilReady says each UDP stream's hello from its socket (stream i+1
// from conns[i]) until the server reports every stream ready: a hello is
// one datagram and may be lost, the control connection's answer cannot.
func (c *clientTest) greetUntilReady(token proto.Token, conns []*net.UDPConn, ready *proto.StreamsReady) error {
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
	err := c.readReady(ready)
	close(stop)
	<-stopped // no hello after the answer: the sockets carry the test now
	return err
}

func (c *clientTest) localPort(id int) int {
	return netsetup.Client{CPort: c.cfg.CPort}.DataPort(id)
}

func (c *clientTest) readReady(ready *proto.StreamsReady) error {
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

func (c *clientTest) run(ctx context.Context) (*result.Result, error) {
	res := c.res
	if c.cfg.Observer != nil {
		c.cfg.Observer.Started(res)
	}
	localIv := make(chan result.Interval, 64)
	control := c.cc
	control.readLoop()
	m := newMerger(res, result.SenderRolesOf(c.spec), c.cfg.Observer, max(time.Second, 3*c.rtt), time.Now)
	mergeTicker := time.NewTicker(mergeTick)
	mergerDone := make(chan struct{})
	go func() {
		m.loop(localIv, control.intervals, mergeTicker.C)
		mergeTicker.Stop()
		close(mergerDone)
	}()

	run := flowrun.New(c.spec, c.flows, c.sockets, func(iv result.Interval) { localIv <- iv })
	_ = c.conn.SetDeadline(time.Time{})
	_ = c.conn.SetKeepAlive(true)
	_ = c.conn.SetKeepAlivePeriod(5 * time.Second)
	if err := c.fw.send(proto.TypeStart, proto.Start{}); err != nil {
		return nil, err
	}
	run.Start()
	testErr := c.wait(ctx, run, control)

	end := run.Finish(result.RoleClient)
	var remote *result.End
	if testErr == nil {
		select {
		case e := <-control.end:
			remote = &e
		case msg := <-control.peerErr:
			testErr = fmt.Errorf("server: %s", msg)
		case err := <-control.lost:
			testErr = fmt.Errorf("waiting for the server's report: %w", err)
		case <-time.After(endReportTimeout):
			testErr = errors.New("the server's final report did not arrive")
		}
	}
	close(localIv)
	<-mergerDone               // the server's intervals precede its final report
	limits := res.Local.Limits // read once the streams connected
	res.Local = end
	res.Local.Intervals = m.local
	res.Local.Limits = limits
	if remote != nil {
		_ = c.fw.send(proto.TypeEndReport, withoutIntervals(end))
		remote.Intervals = m.remote
		res.Remote = *remote
	} else {
		res.Remote.Intervals = m.remote
	}
	if testErr == nil {
		testErr = run.FirstError()
	}
	if testErr != nil {
		res.Error = testErr.Error()
	}
	m.flush()
	return res, testErr
}

// wait runs the test until every local flow has finished: on time, on
// the byte count, on cancellation, or on the server's word.
func (c *clientTest) wait(ctx context.Context, run *flowrun.Runner, control *controlConn) error {
	var timeUp <-chan time.Time
	if c.spec.Duration > 0 {
		timer := time.NewTimer(c.spec.Duration)
		defer timer.Stop()
		timeUp = timer.C
	}
	cancelled := ctx.Done()
	done := run.Done()
	sendersDone := run.SendersDone()
	stop := func(reason string) {
		run.StopSenders()
		_ = c.fw.send(proto.TypeStop, proto.Stop{Reason: reason})
		timeUp, cancelled = nil, nil
	}
	for {
		select {
		case <-done:
			if sendersDone != nil { // done and sendersDone were ready at once
				_ = c.fw.send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			}
			return nil
		case <-timeUp:
			stop("time")
		case <-cancelled:
			stop("interrupted")
		case <-sendersDone:
			_ = c.fw.send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			sendersDone = nil
		case sent := <-control.senderDoneC:
			run.SetPeerSent(sent)
			run.DrainReceivers(netsetup.DrainTime(c.spec, c.rtt))
		case msg := <-control.peerErr:
			run.Abort()
			<-done
			return fmt.Errorf("server: %s", msg)
		case err := <-control.lost:
			run.Abort()
			<-done
			return fmt.Errorf("lost the control connection: %w", err)
		}
	}
}

func (c *clientTest) close() {
	for _, f := range c.flows {
		_ = f.Close()
	}
	if c.ctl != nil {
		_ = c.ctl.Close()
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
}
