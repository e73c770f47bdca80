// Package guide runs `wireperf advise`: a short guided measurement
// against a wireperf server (RTT probes and two tests), whose figures
// internal/advise turns into a verdict and advice.
package guide

import (
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
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// Config is a guided run against a wireperf server.
type Config struct {
	Host string
	Port int    // 0 means spec.DefaultPort
	Bind string // local address; "" for any
	// Duration of each of the two tests; 0 means DefaultDuration.
	Duration time.Duration
	// Streams of the multi-stream test; 0 means DefaultStreams.
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

// Defaults of a guided run: short, since a verdict needs the counters'
// proportions more than a precise rate.
const (
	DefaultDuration = 5 * time.Second
	DefaultStreams  = 4
	DefaultProbes   = 5
)

// Run runs advise's steps against a server: the idle RTT from short
// connections, a single-stream test and a multi-stream test; then
// advise.Analyze gives the verdict and the advice.
func Run(ctx context.Context, cfg Config) (*advise.Report, error) {
	if cfg.Port == 0 {
		cfg.Port = spec.DefaultPort
	}
	if cfg.Duration <= 0 {
		cfg.Duration = DefaultDuration
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
	base.Duration = cfg.Duration
	base.Interval = time.Second
	base.Reverse = cfg.Reverse
	base.Congestion = cfg.Congestion
	if err := base.Validate(); err != nil {
		return nil, err
	}
	direction := "client→server"
	if cfg.Reverse {
		direction = "server→client"
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

	run := func(streams int) (*result.Result, error) {
		s := base
		s.Streams = streams
		progress(fmt.Sprintf("%d-stream test, %v, %s", streams, cfg.Duration, direction))
		res, err := session.RunClient(ctx, session.ClientConfig{
			Host: cfg.Host, Port: cfg.Port, Bind: cfg.Bind, ConnectTimeout: cfg.ConnectTimeout,
			Spec: s, Logger: cfg.Logger, Auth: cfg.Auth, TLS: cfg.TLS,
		})
		if res == nil && err != nil {
			return nil, err
		}
		return res, nil
	}
	if in.Single, err = run(1); err != nil {
		return nil, fmt.Errorf("single-stream test: %w", err)
	}
	if in.Multi, err = run(cfg.Streams); err != nil {
		return nil, fmt.Errorf("%d-stream test: %w", cfg.Streams, err)
	}
	in.LocalLimits = readLimits()
	return advise.Analyze(in), nil
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
