package rrcontrol

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/stats"
)

// clockProbes is how many NTP-style exchanges on the control connection
// estimate the clock offset before an rr test starts.
const clockProbes = 8

// Config is what a request-response client needs (serve.go has the
// exchange).
type Config struct {
	// ClientConfig is the server and how to reach it (key and TLS
	// included), and the spec, whose Protocol is spec.RR. KeepIperf3
	// stays unset: no rr test goes on in iperf3's protocol.
	control.ClientConfig
	// Timeout is how long a UDP response may take before its request
	// counts as lost; 0 adapts it to the RTTs seen.
	Timeout time.Duration
	// Phases, for latency under load: the labels of the phases, and a
	// function that names the current one (an index into Phases) before
	// each request, or -1 to end the test. The spec must have one size.
	Phases []string
	Phase  func() int
	// OnSample, if set, is told of each counted transaction as it
	// completes (rr.ProberConfig.OnSample).
	OnSample func(rr.Sample)
	// Started, if set, is called once the data path is up and the clocks
	// compared, just before the first request.
	Started func()
}

// Run runs a request-response test against a server. The requests go
// out from the calling goroutine (so does every crr connection).
// Cancelling ctx ends the test early but cleanly, with what it measured.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	if cfg.Spec.Protocol != spec.RR {
		return nil, fmt.Errorf("rr: protocol %q, want %q", cfg.Spec.Protocol, spec.RR)
	}
	if err := cfg.Spec.Validate(); err != nil {
		return nil, err
	}
	if cfg.Phase != nil && len(cfg.Spec.RRSizeList()) != 1 {
		return nil, errors.New("rr: phases need exactly one size")
	}
	ctl, err := control.Connect(ctx, cfg.ClientConfig)
	if err != nil {
		return nil, err
	}
	c := &client{ctl: ctl, cfg: cfg, spec: cfg.Spec}
	defer c.close()
	if err := c.dataPath(ctx); err != nil {
		return nil, err
	}
	return c.run(ctx)
}

type client struct {
	ctl   *control.Control
	cfg   Config
	spec  spec.Spec
	udp   *net.UDPConn
	tcp   *net.TCPConn
	ready proto.StreamsReady
	res   *result.Result
}

func (c *client) close() {
	if c.udp != nil {
		_ = c.udp.Close()
	}
	if c.tcp != nil {
		_ = c.tcp.Close()
	}
	c.ctl.Close()
}

func (c *client) token() (proto.Token, error) { return proto.ParseToken(c.ctl.Accept().Token) }

// dataPath opens the test's socket and waits for the server to report it
// ready: a UDP socket that says hello until then, a TCP connection with
// the token, or, for crr, nothing yet.
func (c *client) dataPath(ctx context.Context) error {
	token, err := c.token()
	if err != nil {
		return err
	}
	ctl := c.ctl
	switch c.spec.RRMode {
	case spec.RRUDP:
		conn, err := ctl.Dial(ctx, "udp", netsetup.UDPOptions(c.spec, false))
		if err != nil {
			return fmt.Errorf("rr UDP socket to %s: %w", ctl.Addr(), err)
		}
		c.udp = conn.(*net.UDPConn)
		return ctl.ReadReadyUDP(&c.ready, c.udp)
	case spec.RRTCP:
		conn, err := ctl.Dial(ctx, "tcp", netsetup.TCPOptions(c.spec, true, false))
		if err != nil {
			return fmt.Errorf("rr data connection to %s: %w", ctl.Addr(), err)
		}
		c.tcp = conn.(*net.TCPConn)
		if _, err := c.tcp.Write(proto.DataHello{Token: token, StreamID: 1}.Marshal()); err != nil {
			return fmt.Errorf("rr data connection: %w", err)
		}
	}
	return ctl.ReadReady(&c.ready)
}

// probeClock compares the clocks over the control connection, NTP style:
// the reader stamps each reply as it arrives.
func (c *client) probeClock(ev control.Events) ([]stats.OffsetSample, error) {
	timer := time.NewTimer(c.ctl.Timeout())
	defer timer.Stop()
	var samples []stats.OffsetSample
	for len(samples) < clockProbes {
		t1 := time.Now().UnixNano()
		if err := c.ctl.Send(proto.TypeClockRequest, proto.ClockRequest{T1: t1}); err != nil {
			return nil, err
		}
	reply:
		for {
			select {
			case sm := <-ev.Clock:
				if sm.T1 == t1 {
					samples = append(samples, sm)
					break reply
				}
			case err := <-ev.Lost:
				return nil, fmt.Errorf("comparing clocks: %w", controlError(err))
			case <-timer.C:
				return nil, fmt.Errorf("comparing clocks: no answer within %v", c.ctl.Timeout())
			}
		}
	}
	return samples, nil
}

// KeepAlivePeriod is the control connection's TCP keep-alive period
// while a test runs: 5 s, or 20 round trips on a longer path, so that a
// probe and its answer never race the period.
func KeepAlivePeriod(rtt time.Duration) time.Duration { return max(5*time.Second, 20*rtt) }

// controlError says why the control connection ended, in the user's
// words: the server's own reason when it gave one.
func controlError(err error) error {
	var pe *control.PeerError
	if errors.As(err, &pe) {
		return fmt.Errorf("server: %s", pe.Message)
	}
	return fmt.Errorf("lost the control connection: %w", err)
}

func (c *client) run(ctx context.Context) (*result.Result, error) {
	ctl := c.ctl
	ev := ctl.Listen()
	samples, err := c.probeClock(ev)
	if err != nil {
		return nil, err
	}
	token, _ := c.token()
	req, resp := c.spec.RRLargest()
	pcfg := rr.ProberConfig{
		Mode: c.spec.RRMode, BusyPoll: c.spec.RRBusyPoll, Interval: c.spec.RRInterval,
		Timeout: c.cfg.Timeout, ControlRTT: ctl.RTT(), MaxRequest: req, MaxResponse: resp,
		OnSample: c.cfg.OnSample,
	}
	var p *rr.Prober
	switch c.spec.RRMode {
	case spec.RRUDP:
		p, err = rr.NewProber(c.udp, pcfg)
	case spec.RRTCP:
		p, err = rr.NewProber(c.tcp, pcfg)
	default:
		pcfg.Addr = ctl.TCP().RemoteAddr().(*net.TCPAddr)
		pcfg.Hello = proto.DataHello{Token: token, StreamID: 1}.Marshal()
		pcfg.CRR = rr.CRROptions{SndBuf: int(c.spec.Window), RcvBuf: int(c.spec.Window), TOS: c.spec.TOS}
		if c.cfg.Bind != "" {
			if la, ok := ctl.TCP().LocalAddr().(*net.TCPAddr); ok {
				pcfg.CRR.Local = &net.TCPAddr{IP: la.IP}
			}
		}
		p, err = rr.NewProber(nil, pcfg)
	}
	if err != nil {
		return nil, err
	}
	defer p.Close()

	c.res = &result.Result{
		Spec: c.spec, Token: ctl.Accept().Token, StartedAt: time.Now(),
		ServerAddr: ctl.Addr(), ConnectHost: c.cfg.Host, ConnectPort: c.cfg.Port,
		Local:  result.End{Role: result.RoleClient, Host: flowrun.LocalHost(), Limits: netsetup.LimitsFor(ctl.TCP().LocalAddr().String())},
		Remote: result.End{Role: result.RoleServer, Host: ctl.Accept().Server, Limits: ctl.Accept().Limits},
	}
	if err := ctl.Send(proto.TypeStart, proto.Start{}); err != nil {
		return nil, err
	}
	// The set-up's deadline bounded each step of it; the test itself is
	// as long as its phases, and nothing crosses the control connection
	// meanwhile. TCP's keep-alives, at a period that a long path's round
	// trips fit in many times, tell a dead server from a quiet one.
	_ = ctl.SetDeadline(time.Time{})
	_ = ctl.TCP().SetKeepAlive(true)
	_ = ctl.TCP().SetKeepAlivePeriod(KeepAlivePeriod(ctl.RTT()))
	// The prober runs here; a cancelled context or a failed control
	// connection stops it from outside.
	watchDone, watchStop := make(chan struct{}), make(chan struct{})
	var controlErr error
	var early *result.End
	go func() {
		defer close(watchDone)
		select {
		case <-ctx.Done():
			p.Stop()
		case err := <-ev.Lost:
			controlErr = controlError(err)
			p.Stop()
		case e := <-ev.End:
			early = &e
			controlErr = errors.New("the server ended the test")
			p.Stop()
		case <-watchStop:
		}
	}()
	cpuStart, cpuErr := hostmon.ProcessCPU()
	host := flowrun.StartHostCounters(c.spec)
	if c.cfg.Started != nil {
		c.cfg.Started()
	}
	var out *rr.Outcome
	var runErr error
	if c.cfg.Phase != nil {
		n := c.spec.RRSizeList()[0]
		out, runErr = p.RunPhased(n, c.spec.RRResponseSize(n), c.cfg.Phases, c.cfg.Phase)
	} else {
		out, runErr = p.Run(c.plans())
	}
	close(watchStop)
	<-watchDone
	local := &c.res.Local
	if cpu, err := hostmon.ProcessCPU(); err == nil && cpuErr == nil {
		u, s, t := hostmon.Usage(cpuStart, cpu)
		local.CPU = result.CPU{UserPercent: u, SystemPercent: s, TotalPercent: t}
	}
	local.HostCounters = host.Finish()
	testErr := controlErr
	if testErr == nil {
		testErr = runErr
	}
	var remote *result.End
	if controlErr == nil {
		_ = ctl.Send(proto.TypeStop, proto.Stop{Reason: "done"})
		timer := time.NewTimer(control.EndReportTimeout)
		defer timer.Stop()
		select {
		case e := <-ev.End:
			remote = &e
		case err := <-ev.Lost:
			testErr = cmp.Or(testErr, controlError(err))
		case <-timer.C:
			testErr = cmp.Or(testErr, errors.New("the server's final report did not arrive"))
		}
	} else if early != nil {
		remote = early
	}
	local.RR = c.report(out, samples)
	if remote != nil {
		c.res.Remote = *remote
		if remote.RR != nil && remote.RR.Timestamps != "" {
			local.RR.Timestamps += "; " + remote.RR.Timestamps
		}
		_ = ctl.Send(proto.TypeEndReport, trimmedEnd(*local))
	}
	if c.udp != nil || c.tcp != nil {
		var lc net.Conn = c.tcp
		if c.udp != nil {
			lc = c.udp
		}
		local.Streams = []result.Stream{{ID: 1, Sender: true, LocalAddr: lc.LocalAddr().String(), RemoteAddr: lc.RemoteAddr().String()}}
	}
	if testErr != nil {
		c.res.Error = testErr.Error()
	}
	return c.res, testErr
}

// plans turns the spec's sizes into the prober's points.
func (c *client) plans() []rr.Plan {
	var out []rr.Plan
	for _, n := range c.spec.RRSizeList() {
		out = append(out, rr.Plan{Request: n, Response: c.spec.RRResponseSize(n), Count: c.spec.RRCount, Duration: c.spec.Duration})
	}
	return out
}

// report builds the client's view. The one-way delays are corrected by
// the tighter of two clock offset estimates: the control connection's
// exchanges, or the test's own transaction with the smallest network RTT.
func (c *client) report(out *rr.Outcome, samples []stats.OffsetSample) *result.RR {
	r := &result.RR{Mode: c.spec.RRMode, BusyPoll: c.spec.RRBusyPoll}
	if out == nil {
		return r
	}
	r.Timestamps = out.Timestamps
	r.BusyPollSocket = out.BusyPollSocket
	off, bound, ok := stats.EstimateOffset(samples)
	if ok {
		r.Clock = &result.ClockOffset{Source: "control channel", OffsetUs: float64(off) / 1e3, ErrorBoundUs: float64(bound) / 1e3, Samples: len(samples)}
	}
	if best, have := out.BestExchange(); have {
		if o2, b2, ok2 := stats.EstimateOffset([]stats.OffsetSample{best}); ok2 && (!ok || b2 < bound) {
			off, bound, ok = o2, b2, true
			r.Clock = &result.ClockOffset{Source: "transactions (the exchange with the smallest network RTT)",
				OffsetUs: float64(off) / 1e3, ErrorBoundUs: float64(bound) / 1e3, Samples: 1}
		}
	}
	r.Points = out.Points(off, ok)
	return r
}

// trimmedEnd is the client's End as it travels to the server: without the
// histograms, which only the client's report needs.
func trimmedEnd(e result.End) result.End {
	if e.RR == nil {
		return e
	}
	rr := *e.RR
	rr.Points = append([]result.RRPoint(nil), rr.Points...)
	for i := range rr.Points {
		rr.Points[i].RTTHistogram, rr.Points[i].NetworkRTTHistogram = nil, nil
	}
	if rr.Load != nil {
		l := *rr.Load
		l.LoadResult = nil
		rr.Load = &l
	}
	e.RR = &rr
	return e
}
