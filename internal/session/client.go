package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// Observer sees a client's test as it runs. Both calls come from one
// goroutine, in order.
type Observer interface {
	// Started is called once every connection is up, with the streams'
	// addresses and socket options on both ends, before any data moves.
	Started(r *result.Result)
	// Interval is called for each interval once both ends' figures are
	// in, or when the remote end's are overdue.
	Interval(r *result.Result, row result.IntervalRow)
}

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
}

// ErrRefused wraps a server's refusal of a test.
var ErrRefused = errors.New("server refused the test")

// RunClient runs one test against a server. Cancelling ctx ends the test
// early but cleanly: both ends stop, drain and report what they measured.
// The returned result is non-nil whenever the test started, even when it
// failed part-way; its Error then says why.
func RunClient(ctx context.Context, cfg ClientConfig) (*result.Result, error) {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = spec.DefaultConnectTO
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &clientTest{cfg: cfg, spec: cfg.Spec}
	defer c.close()
	if err := c.handshake(ctx); err != nil {
		return nil, err
	}
	if err := c.connectStreams(ctx); err != nil {
		return nil, err
	}
	return c.run(ctx)
}

type clientTest struct {
	cfg     ClientConfig
	spec    spec.Spec
	addr    string
	conn    *net.TCPConn
	fw      *frameWriter
	rtt     time.Duration // of the greeting exchange
	accept  proto.TestAccept
	streams []*tcpflow.Stream
	sockets map[int]result.Socket
	res     *result.Result
}

func (c *clientTest) dialer(opts sockopt.Options, localPort int) (*net.Dialer, error) {
	d := &net.Dialer{Timeout: c.cfg.ConnectTimeout}
	if c.cfg.Bind != "" || localPort != 0 {
		ip := net.ParseIP(c.cfg.Bind)
		if c.cfg.Bind != "" && ip == nil {
			addrs, err := net.DefaultResolver.LookupIP(context.Background(), "ip", c.cfg.Bind)
			if err != nil || len(addrs) == 0 {
				return nil, fmt.Errorf("-B %s: cannot resolve the local address", c.cfg.Bind)
			}
			ip = addrs[0]
		}
		d.LocalAddr = &net.TCPAddr{IP: ip, Port: localPort}
	}
	if opts != (sockopt.Options{}) {
		d.Control = sockopt.Control(opts)
	}
	return d, nil
}

func (c *clientTest) handshake(ctx context.Context) error {
	c.addr = net.JoinHostPort(c.cfg.Host, strconv.Itoa(c.cfg.Port))
	d, err := c.dialer(sockopt.Options{}, 0)
	if err != nil {
		return err
	}
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.addr, unwrapDialError(err))
	}
	c.conn = conn.(*net.TCPConn)
	c.fw = &frameWriter{w: c.conn}
	_ = c.conn.SetDeadline(time.Now().Add(c.cfg.ConnectTimeout))
	sent := time.Now()
	if err := proto.WriteGreeting(c.conn, proto.MagicControl); err != nil {
		return fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	if _, err := proto.ReadGreeting(c.conn, proto.MagicServer); err != nil {
		if errors.Is(err, proto.ErrBadMagic) {
			return fmt.Errorf("%s is not a wireperf server (it answered with something else)", c.addr)
		}
		return fmt.Errorf("greeting %s: %w", c.addr, err)
	}
	c.rtt = time.Since(sent)
	if err := c.fw.send(proto.TypeTestRequest, proto.TestRequest{Spec: c.spec, Client: localHost()}); err != nil {
		return err
	}
	fr, err := proto.ReadFrame(c.conn)
	if err != nil {
		return fmt.Errorf("waiting for the server's answer: %w", err)
	}
	switch fr.Type {
	case proto.TypeTestAccept:
		return fr.Decode(&c.accept)
	case proto.TypeError:
		var e proto.Error
		_ = fr.Decode(&e)
		return fmt.Errorf("%w: %s", ErrRefused, e.Message)
	default:
		return fmt.Errorf("server sent %v instead of accepting the test", fr.Type)
	}
}

func (c *clientTest) connectStreams(ctx context.Context) error {
	token, err := proto.ParseToken(c.accept.Token)
	if err != nil {
		return err
	}
	c.sockets = map[int]result.Socket{}
	opts := socketOptions(c.spec, true)
	for id := 1; id <= c.spec.DataConns(); id++ {
		port := 0
		if c.cfg.CPort > 0 {
			port = c.cfg.CPort + id - 1
		}
		d, err := c.dialer(opts, port)
		if err != nil {
			return err
		}
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return fmt.Errorf("data connection %d to %s: %w", id, c.addr, unwrapDialError(err))
		}
		tc := conn.(*net.TCPConn)
		setNagle(tc, c.spec)
		if _, err := tc.Write(proto.DataHello{Token: token, StreamID: uint32(id)}.Marshal()); err != nil {
			_ = tc.Close()
			return fmt.Errorf("data connection %d: %w", id, err)
		}
		c.sockets[id] = grantedSocket(tc, c.spec)
		c.streams = append(c.streams, tcpflow.NewStream(id, clientSendsOn(c.spec, id), tc))
	}
	fr, err := proto.ReadFrame(c.conn)
	if err != nil {
		return fmt.Errorf("waiting for the server to accept the data connections: %w", err)
	}
	var ready proto.StreamsReady
	switch fr.Type {
	case proto.TypeStreamsReady:
		if err := fr.Decode(&ready); err != nil {
			return err
		}
	case proto.TypeError:
		var e proto.Error
		_ = fr.Decode(&e)
		return fmt.Errorf("server: %s", e.Message)
	default:
		return fmt.Errorf("server sent %v instead of streams-ready", fr.Type)
	}
	c.res = &result.Result{
		Spec: c.spec, Token: c.accept.Token, StartedAt: time.Now(),
		ServerAddr: c.addr, ConnectHost: c.cfg.Host, ConnectPort: c.cfg.Port,
		Local:  result.End{Role: result.RoleClient, Host: localHost(), Limits: localLimits()},
		Remote: result.End{Role: result.RoleServer, Host: c.accept.Server, Limits: c.accept.Limits},
	}
	for _, st := range c.streams {
		c.res.Local.Streams = append(c.res.Local.Streams, result.Stream{
			ID: st.ID, Sender: st.Sender, Socket: c.sockets[st.ID],
			LocalAddr: st.Conn.LocalAddr().String(), RemoteAddr: st.Conn.RemoteAddr().String(),
		})
	}
	for _, ss := range ready.Streams {
		c.res.Remote.Streams = append(c.res.Remote.Streams, result.Stream{
			ID: ss.ID, Sender: !clientSendsOn(c.spec, ss.ID), Socket: ss.Socket,
			LocalAddr: ss.LocalAddr, RemoteAddr: ss.RemoteAddr,
		})
	}
	return nil
}

func (c *clientTest) run(ctx context.Context) (*result.Result, error) {
	res := c.res
	if c.cfg.Observer != nil {
		c.cfg.Observer.Started(res)
	}
	localIv := make(chan result.Interval, 64)
	control := readControl(c.conn)
	m := newMerger(res, senderRoles(c.spec), c.cfg.Observer, max(time.Second, 3*c.rtt))
	mergerDone := make(chan struct{})
	go func() { m.loop(localIv, control.intervals); close(mergerDone) }()

	run := newRunner(c.spec, c.streams, c.sockets, func(iv result.Interval) { localIv <- iv })
	_ = c.conn.SetDeadline(time.Time{})
	_ = c.conn.SetKeepAlive(true)
	_ = c.conn.SetKeepAlivePeriod(5 * time.Second)
	if err := c.fw.send(proto.TypeStart, proto.Start{}); err != nil {
		return nil, err
	}
	run.start()
	testErr := c.wait(ctx, run, control)

	end := run.finish(result.RoleClient)
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
	<-mergerDone // the server's intervals precede its final report
	res.Local = end
	res.Local.Intervals = m.local
	res.Local.Limits = localLimits()
	if remote != nil {
		_ = c.fw.send(proto.TypeEndReport, withoutIntervals(end))
		remote.Intervals = m.remote
		res.Remote = *remote
	} else {
		res.Remote.Intervals = m.remote
	}
	if testErr == nil {
		testErr = run.firstError()
	}
	if testErr != nil {
		res.Error = testErr.Error()
	}
	m.flush()
	return res, testErr
}

// wait runs the test until every local stream has finished: on time, on
// the byte count, on cancellation, or on the server's word.
func (c *clientTest) wait(ctx context.Context, run *runner, control *controlReader) error {
	var timeUp <-chan time.Time
	if c.spec.Duration > 0 {
		timer := time.NewTimer(c.spec.Duration)
		defer timer.Stop()
		timeUp = timer.C
	}
	cancelled := ctx.Done()
	done := run.done()
	stop := func(reason string) {
		run.stop(drainTimeout)
		_ = c.fw.send(proto.TypeStop, proto.Stop{Reason: reason})
		timeUp, cancelled = nil, nil
	}
	for {
		select {
		case <-done:
			return nil
		case <-timeUp:
			stop("time")
		case <-cancelled:
			stop("interrupted")
		case msg := <-control.peerErr:
			run.abort()
			<-done
			return fmt.Errorf("server: %s", msg)
		case err := <-control.lost:
			run.abort()
			<-done
			return fmt.Errorf("lost the control connection: %w", err)
		}
	}
}

func (c *clientTest) close() {
	for _, st := range c.streams {
		_ = st.Conn.Close()
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// unwrapDialError keeps the part of a dial error a user needs: "connection
// refused", "i/o timeout", "no such host".
func unwrapDialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
