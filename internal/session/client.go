// Package session runs the bulk test's lifecycle (TCP or UDP streams) on
// both ends, over the control channel of internal/control: synchronised
// start, interval reports, stop, and the exchange of each end's final
// report. The data streams themselves are driven by internal/flowrun.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
)

// Observer sees a client's test as it runs.
type Observer = result.Observer

// ClientConfig is what a client needs to run a bulk test: how to reach
// the server and have the test accepted, and what the streams need.
type ClientConfig struct {
	control.ClientConfig
	CPort    int // first data connection's local port; 0 for any
	Observer Observer
	// RcvTimeout ends the test with an error when the client's
	// receiving streams get nothing for this long (--rcv-timeout); 0
	// for no bound.
	RcvTimeout time.Duration
	// File is -F: a one-stream TCP test's sender sends its bytes, a
	// receiver writes what it receives to it; nil for none.
	File io.ReadWriter
	// StartGate, when set, is called once every data connection is up and
	// before Start is sent: a group test's agent holds its streams there
	// until the common start instant. An error closes the test unstarted.
	StartGate func(context.Context) error
}

// ErrNoStreamTOS is the client's refusal of a server that admitted a
// test with a TOS per stream (spec.Spec.StreamTOS) without saying that
// it sets them: a server older than the field, which ignores it.
var ErrNoStreamTOS = errors.New("the server does not set a TOS per stream (a wireperf server older than this client); the test was not run")

// RunClient runs one test against a server. Cancelling ctx ends the test
// early but cleanly: both ends stop, drain and report what they measured.
// The returned result is non-nil whenever the test started, even when it
// failed part-way; its Error then says why. A refusal or a server that
// speaks iperf3 come back as control.Connect's errors.
func RunClient(ctx context.Context, cfg ClientConfig) (*result.Result, error) {
	cfg.ClientConfig = cfg.ClientConfig.WithDefaults()
	ctl, err := control.Connect(ctx, cfg.ClientConfig)
	if err != nil {
		return nil, err
	}
	if len(cfg.Spec.StreamTOS) > 0 && !ctl.Accept().StreamTOS {
		// A server before the field ignores it: its sockets would carry
		// no class, and the test would not be the one asked for.
		_ = ctl.Send(proto.TypeError, proto.Error{Message: "the client asked for a TOS per stream, which this server does not set"})
		ctl.Close()
		return nil, fmt.Errorf("%s: %w", ctl.Addr(), ErrNoStreamTOS)
	}
	c := &clientTest{cfg: cfg, spec: cfg.Spec, ctl: ctl}
	defer c.close()
	if err := c.connectStreams(ctx); err != nil {
		return nil, err
	}
	if cfg.StartGate != nil {
		_ = ctl.TCP().SetDeadline(time.Time{}) // the wait is the gate's to bound
		if err := cfg.StartGate(ctx); err != nil {
			return nil, err
		}
		c.res.StartedAt = time.Now()
	}
	return c.run(ctx)
}

type clientTest struct {
	cfg     ClientConfig
	spec    spec.Spec
	ctl     *control.Control
	flows   []flowrun.Flow
	sockets map[int]result.Socket
	res     *result.Result
}

// dialer dials network from -B's address and localPort, with opts set
// before connect.
func (c *clientTest) dialer(network string, opts sockopt.Options, localPort int) (*net.Dialer, error) {
	return c.cfg.Dialing(c.cfg.CPort).DataDialer(network, localPort, opts)
}

func (c *clientTest) connectStreams(ctx context.Context) error {
	token, err := proto.ParseToken(c.ctl.Accept().Token)
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
		Spec: c.spec, Token: c.ctl.Accept().Token, StartedAt: time.Now(), ControlRTT: c.ctl.RTT(), ControlMSS: netsetup.ControlMSS(c.ctl.TCP()),
		ServerAddr: c.ctl.Addr(), ConnectHost: c.cfg.Host, ConnectPort: c.cfg.Port,
		Local:  result.End{Role: result.RoleClient, Host: flowrun.LocalHost()},
		Remote: result.End{Role: result.RoleServer, Host: c.ctl.Accept().Server, Limits: c.ctl.Accept().Limits},
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
	return c.ctl.ReadReady(ready)
}

// maxDialsAtOnce bounds the data connections dialled side by side.
const maxDialsAtOnce = 16

// dialTCP opens data connection id and says hello on it.
func (c *clientTest) dialTCP(ctx context.Context, token proto.Token, id int) (flowrun.Flow, result.Socket, error) {
	d, err := c.dialer("tcp", netsetup.StreamTCPOptions(c.spec, id, true, c.spec.ClientSendsOn(id)), c.localPort(id))
	if err != nil {
		return nil, result.Socket{}, err
	}
	conn, err := d.DialContext(ctx, "tcp", c.ctl.DataAddr())
	if err != nil {
		return nil, result.Socket{}, fmt.Errorf("data connection %d to %s: %w", id, c.ctl.Addr(), netsetup.DialError(err))
	}
	tc := conn.(*net.TCPConn)
	netsetup.SetNagle(tc, c.spec)
	st, err := newTCPStream(id, c.spec.ClientSendsOn(id), tc, c.spec)
	if err != nil {
		_ = tc.Close()
		return nil, result.Socket{}, err
	}
	if c.cfg.File != nil {
		st.UseFile(c.cfg.File)
	}
	flow := flowrun.NewTCPFlow(st, c.spec.Length, c.spec.TimelinePeriod()).AskMPTCP(c.spec.MPTCP)
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
		conn, err := d.DialContext(ctx, "udp", c.ctl.DataAddr())
		if err != nil {
			return fmt.Errorf("UDP stream %d to %s: %w", id, c.ctl.Addr(), netsetup.DialError(err))
		}
		uc := conn.(*net.UDPConn)
		if c.spec.ClientSendsOn(id) {
			if err := netsetup.CheckUDPPacing(c.spec, uc.LocalAddr().String()); err != nil {
				_ = uc.Close()
				return err
			}
		}
		f, err := flowrun.NewUDPFlow(uc, c.spec, [16]byte(token), id, c.spec.ClientSendsOn(id), c.ctl.Auth().DatagramKey([16]byte(token)))
		if err != nil {
			_ = uc.Close()
			return fmt.Errorf("UDP stream %d: %w", id, err)
		}
		c.flows = append(c.flows, f)
		c.sockets[id] = flowrun.UDPSocket(uc, c.spec, f.Sender())
		conns = append(conns, uc)
	}
	return c.ctl.ReadReadyUDP(ready, conns...)
}

func (c *clientTest) localPort(id int) int {
	return netsetup.Client{CPort: c.cfg.CPort}.DataPort(id)
}

func (c *clientTest) run(ctx context.Context) (*result.Result, error) {
	res := c.res
	if c.cfg.Observer != nil {
		c.cfg.Observer.Started(res)
	}
	localIv := make(chan result.Interval, 64)
	ev := c.ctl.Listen()
	m := newMerger(res, result.SenderRolesOf(c.spec), c.cfg.Observer, max(time.Second, 3*c.ctl.RTT()), time.Now)
	mergeTicker := time.NewTicker(mergeTick)
	mergerDone := make(chan struct{})
	go func() {
		m.loop(localIv, ev.Intervals, mergeTicker.C)
		mergeTicker.Stop()
		close(mergerDone)
	}()

	run := flowrun.New(c.spec, c.flows, c.sockets, func(iv result.Interval) { localIv <- iv })
	tcp := c.ctl.TCP()
	_ = tcp.SetDeadline(time.Time{})
	if ka := c.cfg.KeepAlive; ka != nil { // --cntl-ka, set when it connected
		_ = tcp.SetKeepAliveConfig(*ka)
	} else {
		_ = tcp.SetKeepAlive(true)
		_ = tcp.SetKeepAlivePeriod(5 * time.Second)
	}
	if err := c.ctl.Send(proto.TypeStart, proto.Start{}); err != nil {
		return nil, err
	}
	run.Start()
	testErr := c.wait(ctx, run, ev)

	end := run.Finish(result.RoleClient)
	var remote *result.End
	if testErr == nil {
		select {
		case e := <-ev.End:
			remote = &e
		case msg := <-ev.PeerError:
			testErr = fmt.Errorf("server: %s", msg)
		case err := <-ev.Lost:
			testErr = fmt.Errorf("waiting for the server's report: %w", err)
		case <-time.After(control.EndReportTimeout):
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
		_ = c.ctl.Send(proto.TypeEndReport, withoutIntervals(end))
		remote.Intervals = m.remote
		res.Remote = *remote
		if c.ctl.Accept().ServerOutput {
			res.ServerOutput = c.awaitServerOutput(ev)
		}
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

// awaitServerOutput takes the server's own report, which it sends once it
// has the client's final report. A report that doesn't come costs the
// test nothing: the result just has none.
func (c *clientTest) awaitServerOutput(ev control.Events) *result.ServerOutput {
	select {
	case o := <-ev.ServerOutput:
		return &result.ServerOutput{Text: o.Text, JSON: o.JSON}
	case <-ev.Lost:
		// The server hangs up right after its report: both may be ready.
		select {
		case o := <-ev.ServerOutput:
			return &result.ServerOutput{Text: o.Text, JSON: o.JSON}
		default:
		}
	case <-time.After(control.EndReportTimeout):
	}
	return nil
}

// wait runs the test until every local flow has finished: on time, on
// the byte count, on cancellation, or on the server's word.
func (c *clientTest) wait(ctx context.Context, run *flowrun.Runner, ev control.Events) error {
	var timeUp <-chan time.Time
	if c.spec.Duration > 0 {
		timer := time.NewTimer(c.spec.Duration)
		defer timer.Stop()
		timeUp = timer.C
	}
	cancelled := ctx.Done()
	done := run.Done()
	sendersDone := run.SendersDone()
	var idle <-chan struct{}
	if c.cfg.RcvTimeout > 0 {
		idle = run.ReceiversIdle(c.cfg.RcvTimeout)
	}
	stop := func(reason string) {
		run.StopSenders()
		_ = c.ctl.Send(proto.TypeStop, proto.Stop{Reason: reason})
		timeUp, cancelled = nil, nil
	}
	for {
		select {
		case <-done:
			if sendersDone != nil { // done and sendersDone were ready at once
				_ = c.ctl.Send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			}
			return nil
		case <-timeUp:
			stop("time")
		case <-cancelled:
			stop("interrupted")
		case <-sendersDone:
			_ = c.ctl.Send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			sendersDone = nil
		case sent := <-ev.SenderDone:
			run.SetPeerSent(sent)
			run.DrainReceivers(netsetup.DrainTime(c.spec, c.ctl.RTT()))
		case msg := <-ev.PeerError:
			run.Abort()
			<-done
			return fmt.Errorf("server: %s", msg)
		case err := <-ev.Lost:
			run.Abort()
			<-done
			return fmt.Errorf("lost the control connection: %w", err)
		case <-idle:
			_ = c.ctl.Send(proto.TypeStop, proto.Stop{Reason: "receive timeout"})
			run.Abort()
			<-done
			return fmt.Errorf("no data received for %v (--rcv-timeout)", c.cfg.RcvTimeout)
		}
	}
}

func (c *clientTest) close() {
	for _, f := range c.flows {
		_ = f.Close()
	}
	c.ctl.Close()
}
