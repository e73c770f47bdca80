// Package runner runs a test as package measure describes it, against a
// server: a bulk test in wireperf's protocol or, when asked or when the
// server turns out to be iperf3, in iperf3's; a request-response test,
// alone or under load. It is the one place that decides how a described
// test is run, for the command line and for campaigns alike.
package runner

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/cpuaffinity"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/rrload"
	"github.com/wireperf/wireperf/internal/runner/mcastrun"
	"github.com/wireperf/wireperf/internal/runner/udpmonrun"
	"github.com/wireperf/wireperf/internal/session"
)

// Options are how a test reaches its server and who sees it run.
type Options struct {
	Observer result.Observer // intervals as they come; may be nil
	Logger   *slog.Logger
	Auth     *auth.Credential
	TLS      *tls.Config
	// Iperf3Auth is iperf3's credentials, sent when the test speaks
	// iperf3's protocol (--username); a wireperf server never sees them.
	Iperf3Auth *iperf3.Credentials
	// Notice, when set, is told of a decision the user should see: the
	// switch to iperf3's protocol.
	Notice func(string)
}

// Client runs a bulk test against host. A server that answers as iperf3
// does is tested in iperf3's protocol on the same connection (without
// --iperf3 as with it); --iperf3 speaks it from the start.
func Client(ctx context.Context, c *measure.Client, host string, o Options) (*result.Result, error) {
	if mcastrun.IsGroup(host) {
		return nil, fmt.Errorf("%s is a multicast group: its test is a sender alone, run as wireperf -c GROUP -u", host)
	}
	if c.TTL != 0 {
		return nil, fmt.Errorf("--ttl %d: a multicast sender's TTL, and %s is not a multicast group", c.TTL, host)
	}
	if c.ServerCPU != measure.NoCPU && !c.Iperf3 {
		return nil, fmt.Errorf("-A %s: a wireperf server runs many tests at once and pins itself for none; give -A n, or --iperf3 against an iperf3 server", c.Affinity)
	}
	if c.Iperf3 && o.Auth != nil {
		// A key is proved in wireperf's handshake, which iperf3 lacks.
		return nil, fmt.Errorf("%w: --iperf3 with --auth-key-file: an iperf3 server cannot prove it holds the key", auth.ErrFailed)
	}
	if c.Iperf3 && c.Spec.TripTimes {
		return nil, errTripTimesIperf3
	}
	if c.Iperf3 && c.Spec.Isochronous != nil {
		return nil, errIsochronousIperf3
	}
	var file *os.File
	if c.File != "" {
		f, err := openDataFile(c.File, c.Spec.ClientSends())
		if err != nil {
			return nil, err
		}
		defer f.Close()
		file = f
	}
	if c.ClientCPU != measure.NoCPU {
		restore, err := cpuaffinity.Pin(c.ClientCPU)
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	family := c.Family()
	keepAlive := controlKeepAlive(c.ControlKeepAlive)
	rcvTimeout := time.Duration(0)
	if c.Spec.ServerSends() {
		rcvTimeout = c.RcvTimeout
	}
	ip3 := iperf3.ClientConfig{
		Host: host, Port: c.Port, Bind: c.Bind, CPort: c.CPort, ConnectTimeout: c.ConnectTimeout, Spec: c.Spec,
		Observer: o.Observer, Logger: o.Logger, RetryBusy: c.RetryBusy, UDPCounters64: c.Counters64,
		Family: family, BindDevice: c.BindDevice, KeepAlive: keepAlive, RcvTimeout: rcvTimeout,
		GetServerOutput: c.GetServerOutput, Auth: o.Iperf3Auth,
	}
	if file != nil { // a nil *os.File in the interface would not be nil
		ip3.File = file
	}
	if c.ServerCPU != measure.NoCPU {
		ip3.ServerCPU = &c.ServerCPU
	}
	if c.Iperf3 {
		return iperf3.RunClient(ctx, ip3)
	}
	cfg := session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: host, Port: c.Port, Bind: c.Bind,
		ConnectTimeout: c.ConnectTimeout, Spec: c.Spec, Logger: o.Logger,
		Auth: o.Auth, TLS: o.TLS, KeepIperf3: true, ServerOutput: c.GetServerOutput, Format: c.Format,
		Family: family, BindDevice: c.BindDevice, KeepAlive: keepAlive,
	}, CPort: c.CPort, Observer: o.Observer, RcvTimeout: rcvTimeout, File: ip3.File}
	res, err := session.RunClient(ctx, cfg)
	var found *control.Iperf3ServerError
	if !errors.As(err, &found) || found.Server == nil {
		return res, err
	}
	srv := found.Server
	if c.Spec.TripTimes || c.Spec.Isochronous != nil {
		if srv.Conn != nil {
			srv.Conn.Close()
		}
		if c.Spec.Isochronous != nil {
			return nil, fmt.Errorf("%s: %w", srv.Addr, errIsochronousIperf3)
		}
		return nil, fmt.Errorf("%s: %w", srv.Addr, errTripTimesIperf3)
	}
	if o.Notice != nil {
		o.Notice(fmt.Sprintf("%s is an iperf3 server; switching to iperf3 mode", srv.Addr))
	}
	if srv.Conn != nil { // an idle server: go on where the greeting left off
		return iperf3.RunClientOn(ctx, srv.Conn, srv.Sent, ip3)
	}
	return iperf3.RunClient(ctx, ip3) // a busy one hung up: iperf3 retries itself (--retry-busy)
}

// openDataFile opens -F's file: to read what the client sends, or
// created (emptied if it exists, readable by its owner only, as iperf3
// creates it) to write what the client receives.
func openDataFile(name string, sends bool) (*os.File, error) {
	var f *os.File
	var err error
	if sends {
		f, err = os.Open(name)
	} else {
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("-F: %w", err)
	}
	return f, nil
}

// controlKeepAlive is --cntl-ka as Go sets it; nil without the flag.
// A part not given keeps Go's default (a zero field), which every
// control connection has anyway.
func controlKeepAlive(k measure.KeepAlive) *net.KeepAliveConfig {
	if !k.On {
		return nil
	}
	return &net.KeepAliveConfig{Enable: true, Idle: k.Idle, Interval: k.Interval, Count: k.Count}
}

// RRConfig is a request-response test's client configuration.
func RRConfig(r *measure.RR, host string, o Options) rrcontrol.Config {
	return rrcontrol.Config{ClientConfig: control.ClientConfig{
		Host: host, Port: r.Port, Bind: r.Bind, ConnectTimeout: r.ConnectTimeout, Spec: r.Spec, Logger: o.Logger,
		Auth: o.Auth, TLS: o.TLS,
	}, Timeout: r.Timeout}
}

// RR runs a request-response test against host: its sizes one after the
// other, or with --load its probes before, under and after a bulk test.
func RR(ctx context.Context, r *measure.RR, host string, o Options) (*result.Result, error) {
	cfg := RRConfig(r, host, o)
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	var res *result.Result
	var err error
	if r.Load != "" {
		res, err = rrload.Run(ctx, rrload.Config{Probe: cfg, Idle: r.LoadIdle, After: r.LoadAfter, Load: r.LoadSpec})
	} else {
		res, err = rrcontrol.Run(ctx, cfg)
	}
	if res != nil {
		res.Warnings, res.Lab = append(res.Warnings, router.BehindLines(time.Now())...), router.Line()
		// Through a lab, the path's bound is known: a network RTT above
		// it was a host's.
		if rr := res.Local.RR; rr != nil && rr.Load != nil {
			if bound := router.RTTBound(); bound > 0 {
				rr.Load.HostDelays = rrload.HostDelays(rr.Points, bound)
			}
		}
	}
	return res, err
}

// UDPMonConfig is a UDPmon sweep against host: each point a UDP test of
// its own in wireperf's protocol.
func UDPMonConfig(u *measure.UDPMon, host string, o Options) udpmonrun.Config {
	cfg := udpmonrun.Config{Plan: u.Cfg}
	cfg.Server, cfg.Logger = fmt.Sprintf("%s port %d", host, u.Port), o.Logger
	cfg.Client = session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: host, Port: u.Port, Bind: u.Bind, ConnectTimeout: u.ConnectTimeout,
		Logger: o.Logger, Auth: o.Auth, TLS: o.TLS,
	}}
	return cfg
}

// JSON runs a client or rr test and returns its -J document (with
// whatever was measured when the test failed part way).
func JSON(ctx context.Context, t measure.Test, host string, o Options) ([]byte, error) {
	var buf bytes.Buffer
	switch {
	case t.Client != nil:
		em := &emit.JSON{W: &buf, Opt: emit.Options{Format: t.Client.Format}}
		o.Observer = &emit.Observer{Emitter: em, Host: host, Port: t.Client.Port}
		router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
		res, err := Client(ctx, t.Client, host, o)
		if res != nil {
			res.Warnings, res.Lab = append(res.Warnings, router.BehindLines(time.Now())...), router.Line()
			if werr := em.Summary(res); werr != nil && err == nil {
				err = werr
			}
		}
		return buf.Bytes(), err
	case t.RR != nil:
		res, err := RR(ctx, t.RR, host, o)
		if res != nil {
			if werr := (&emit.RRJSON{W: &buf}).Write(res); werr != nil && err == nil {
				err = werr
			}
		}
		return buf.Bytes(), err
	}
	return nil, fmt.Errorf("%s tests are not run one at a time here", t.Kind)
}

// errIsochronousIperf3 refuses a unicast --isochronous test against
// iperf3, which has no frames.
var errIsochronousIperf3 = errors.New("--isochronous needs a wireperf server (or a multicast group): iperf3 sends no frames")

// errTripTimesIperf3 refuses --trip-times against iperf3, whose senders
// do not stamp their blocks nor its receivers time them.
var errTripTimesIperf3 = errors.New("--trip-times needs a wireperf server: iperf3's protocol has no send-time stamps in TCP")
