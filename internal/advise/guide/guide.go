// Package guide runs `wireperf advise`: a short guided measurement
// against a wireperf server (RTT probes and two tests), whose figures
// internal/advise turns into a verdict and advice.
package guide

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// Config is a guided run against a wireperf server.
type Config struct {
	Host string
	Port int    // 0 means spec.DefaultPort
	Bind string // local address; "" for any
	// Duration of each test; 0 means advise chooses it from the RTT and
	// the slow start it measures (advise.TestLength, advise.Lengthen).
	Duration time.Duration
	// Streams of the first multi-stream test; 0 means DefaultStreams.
	// Without a Bottleneck, advise tries more streams while they are
	// window-limited (advise.NextStreams).
	Streams int
	// Reverse measures server → client instead of client → server.
	Reverse bool
	// Bottleneck is the path's bottleneck rate in bit/s, when known.
	Bottleneck float64
	// Congestion is the congestion control for both tests ("" for the
	// hosts' default).
	Congestion string
	// Probes is how many connections time the idle RTT; 0 means
	// DefaultProbes.
	Probes         int
	ConnectTimeout time.Duration
	Logger         *slog.Logger
	// Auth and TLS are the key and the TLS settings for a server that
	// asks for them (session.ClientConfig's).
	Auth *auth.Credential
	TLS  *tls.Config
	// Progress, when set, hears what the run is doing.
	Progress func(step string)
}

// Defaults of a guided run.
const (
	DefaultStreams = 4
	DefaultProbes  = 5
)

// Run runs advise's steps against a server: the idle RTT from short
// connections, a single-stream test (run again longer when slow start
// took most of it), packet trains for the path's capacity (unless the
// bottleneck is given), and multi-stream tests with more streams while
// the streams are window-limited; then advise.Analyze gives the verdict
// and the advice.
func Run(ctx context.Context, cfg Config) (*advise.Report, error) {
	if cfg.Port == 0 {
		cfg.Port = spec.DefaultPort
	}
	if cfg.Streams <= 1 {
		cfg.Streams = DefaultStreams
	}
	if cfg.Probes <= 0 {
		cfg.Probes = DefaultProbes
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = spec.DefaultConnectTO
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	base := spec.Default()
	base.Duration = cmp.Or(cfg.Duration, advise.MinTestLength)
	base.Interval = time.Second
	base.Reverse = cfg.Reverse
	base.Congestion = cfg.Congestion
	if err := base.Validate(); err != nil {
		return nil, err
	}
	direction, senderRole := "client→server", result.RoleClient
	if cfg.Reverse {
		direction, senderRole = "server→client", result.RoleServer
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	in := advise.Inputs{Target: addr, Reverse: cfg.Reverse, Bottleneck: cfg.Bottleneck, StartedAt: time.Now()}

	progress(fmt.Sprintf("timing the idle RTT with %d connections to %s", cfg.Probes, addr))
	probes, info, err := ProbeRTT(ctx, addr, cfg.Bind, cfg.Probes, cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	in.Probes = probes
	in.ProbeMethod = "TCP connect to the server's port: the kernel's RTT of the SYN/SYN-ACK exchange (TCP_INFO), least of the probes"
	if len(probes) > 0 && !probes[0].Kernel {
		in.ProbeMethod = "TCP connect to the server's port, timed around connect() (no TCP_INFO here), least of the probes"
	}
	if info != nil {
		in.ProbeMSS, in.ProbeMTU = int(info.SndMSS), int(info.PMTU)
	}

	rtt := time.Duration(advise.MinProbe(probes)) * time.Microsecond
	in.Length, in.LengthGiven = cfg.Duration, cfg.Duration > 0
	if !in.LengthGiven {
		in.Length = advise.TestLength(rtt, in.ProbeMTU)
	}
	run := func(streams int) (*result.Result, error) {
		s := base
		s.Streams, s.Duration = streams, in.Length
		progress(fmt.Sprintf("%d-stream test, %v, %s", streams, in.Length, direction))
		res, err := session.RunClient(ctx, session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: cfg.Host, Port: cfg.Port, Bind: cfg.Bind, ConnectTimeout: cfg.ConnectTimeout,
			Spec: s, Logger: cfg.Logger, Auth: cfg.Auth, TLS: cfg.TLS,
		}})
		if res == nil && err != nil {
			return nil, err
		}
		return res, nil
	}
	if in.Single, err = run(1); err != nil {
		return nil, fmt.Errorf("single-stream test: %w", err)
	}
	if !in.LengthGiven {
		single := advise.MeasurementOf(in.Single, senderRole, cfg.Bottleneck)
		if next, again := advise.Lengthen(single, rtt, in.ProbeMTU, in.Length); again {
			progress(fmt.Sprintf("slow start took most of the %v test: running it again for %v", in.Length, next))
			in.Extra = append(in.Extra, in.Single)
			in.Length = next
			if in.Single, err = run(1); err != nil {
				return nil, fmt.Errorf("single-stream test: %w", err)
			}
		}
	}
	// Packet trains measure the path's capacity past whatever held TCP
	// back: windows, or a congestion control that left slow start early.
	if cfg.Bottleneck == 0 {
		var trains []advise.Train
		for i := range advise.Trains {
			progress(fmt.Sprintf("packet train %d of %d: %d datagrams of %d bytes, %s", i+1, advise.Trains, advise.TrainDatagrams, advise.TrainSize, direction))
			trains = append(trains, *runTrain(ctx, cfg))
		}
		in.Train = advise.MedianTrain(trains)
		if in.Train.Error == "" && in.Train.CapacityBps == 0 {
			cfg.logger().Info("the packet trains were not sent faster than they arrived", "sent_bps", in.Train.SentWireBps, "received_bps", in.Train.RecvWireBps)
		}
	}
	var multi []*result.Result
	var spent time.Duration
	for streams := cfg.Streams; streams > 0; {
		start := time.Now()
		res, err := run(streams)
		if err != nil {
			return nil, fmt.Errorf("%d-stream test: %w", streams, err)
		}
		spent += time.Since(start)
		multi = append(multi, res)
		in.Steps = append(in.Steps, advise.StepOf(advise.MeasurementOf(res, senderRole, cfg.Bottleneck)))
		if cfg.Bottleneck > 0 {
			break // the path's rate is known: more streams add nothing to the verdict
		}
		if streams = advise.NextStreams(in.Steps, spent, in.Length); streams > 0 {
			progress(fmt.Sprintf("the streams were window-limited: trying %d", streams))
		}
	}
	best := advise.BestStep(in.Steps)
	for i, r := range multi {
		if i == best {
			in.Multi = r
		} else {
			in.Extra = append(in.Extra, r)
		}
	}
	in.LocalLimits = readLimits()
	return advise.Analyze(in), nil
}

// runTrain sends a packet train (advise.TrainDatagrams datagrams as fast
// as the sender can) and judges the rate it arrived at. A failed train
// says why in its Error: the tests before it still make a verdict.
func runTrain(ctx context.Context, cfg Config) *advise.Train {
	s := udpmon.Plan{Count: advise.TrainDatagrams, Reverse: cfg.Reverse}.Spec(advise.TrainSize, 0)
	res, err := session.RunClient(ctx, session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: cfg.Host, Port: cfg.Port, Bind: cfg.Bind, ConnectTimeout: cfg.ConnectTimeout,
		Spec: s, Logger: cfg.Logger,
	}})
	if res == nil {
		t := &advise.Train{Datagrams: advise.TrainDatagrams, Error: "no result"}
		if err != nil {
			t.Error = err.Error()
		}
		return t
	}
	p := udpmon.PointOf(res, cfg.Reverse)
	t := advise.TrainOf(advise.TrainDatagrams, p.Received, p.SentWireBps, p.RecvWireBps)
	if err != nil {
		t.Error = err.Error()
	}
	return &t
}

func (cfg Config) logger() *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ProbeRTT times the idle path's RTT through the server: count TCP
// connections to addr, each closed at once (the server counts it as a
// connection that said nothing). On Linux the kernel's own RTT sample of
// the SYN/SYN-ACK exchange is read from TCP_INFO, free of scheduling
// delay; elsewhere the time around connect(). It returns every probe and
// the last connection's TCP_INFO (negotiated MSS, path MTU).
func ProbeRTT(ctx context.Context, addr, bind string, count int, timeout time.Duration) ([]advise.Probe, *tcpinfo.Info, error) {
	d := &net.Dialer{Timeout: timeout}
	if bind != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(bind)}
	}
	var probes []advise.Probe
	var last *tcpinfo.Info
	for i := range count {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		start := time.Now()
		c, err := d.DialContext(ctx, "tcp", addr)
		took := time.Since(start)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Err != nil {
				err = op.Err
			}
			return nil, nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		p := advise.Probe{RTTus: uint32(min(took.Microseconds(), 1<<32-1))}
		if info, err := tcpinfo.FromConn(c.(*net.TCPConn)); err == nil && (info.MinRTTus > 0 || info.RTTus > 0) {
			p.RTTus, p.Kernel = info.RTTus, true
			if info.MinRTTus > 0 {
				p.RTTus = info.MinRTTus
			}
			last = info
		} else if raw, err := c.(*net.TCPConn).SyscallConn(); err == nil {
			if si, err := sockopt.Read(raw); err == nil {
				last = &tcpinfo.Info{SndMSS: uint32(max(si.MSS, 0)), PMTU: uint32(max(si.MTU, 0))}
			}
		}
		_ = c.Close()
		probes = append(probes, p)
	}
	return probes, last, nil
}

// readLimits reads this host's limits, keeping what can be read: inside
// a network namespace net.core.rmem_max and wmem_max are missing, and the
// rest is still worth having.
func readLimits() *result.Limits {
	l, _ := hostmon.ReadLimits()
	if l.TCPRmem[2] == 0 && l.TCPWmem[2] == 0 && l.RmemMax == 0 && l.WmemMax == 0 {
		return nil
	}
	return &result.Limits{RmemMax: l.RmemMax, WmemMax: l.WmemMax, TCPRmem: l.TCPRmem, TCPWmem: l.TCPWmem,
		Congestion: l.Congestion, DefaultQdisc: l.DefaultQdisc}
}
