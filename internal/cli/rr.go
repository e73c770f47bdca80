package cli

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/rrload"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// rrFlags are the rr command's flags.
type rrFlags struct {
	spec           spec.Spec
	port           int
	bind           string
	connectTimeout time.Duration
	udp, tcp, crr  bool
	sizes          string
	response       int64
	timeout        time.Duration
	json           bool
	logfile        string
	log            logOptions
	security       clientSecurity // --auth-key-file, --tls-ca, --tls-pin (security.go)

	load      string
	loadTime  time.Duration
	loadIdle  time.Duration
	loadAfter time.Duration
}

// Latency under load defaults: a few seconds of idle probes, the load,
// a few seconds after; probes every 10 ms.
const (
	defaultLoadTime      = 10 * time.Second
	defaultLoadIdle      = 3 * time.Second
	defaultLoadAfter     = 3 * time.Second
	defaultLoadProbeTick = 10 * time.Millisecond
)

func newRRFlags() *rrFlags {
	return &rrFlags{
		spec:           spec.Spec{Protocol: spec.RR, Streams: 1, Duration: spec.DefaultRRDuration},
		port:           spec.DefaultPort,
		connectTimeout: spec.DefaultConnectTO,
		sizes:          "64",
		log:            logOptions{level: "warn", format: "text"},
		loadTime:       defaultLoadTime,
		loadIdle:       defaultLoadIdle,
		loadAfter:      defaultLoadAfter,
	}
}

func (f *rrFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	s := &f.spec
	fs.IntVarP(&f.port, "port", "p", f.port, "server port")
	fs.BoolVar(&f.udp, "udp", false, "one UDP datagram each way per transaction (the default)")
	fs.BoolVar(&f.tcp, "tcp", false, "requests and responses on one TCP connection")
	fs.BoolVar(&f.crr, "crr", false, "a new TCP connection for every transaction (connect, request, response, close)")
	fs.StringVar(&f.sizes, "sizes", f.sizes, "request sizes in bytes: a list (64,512,1472) or START:END:STEP (64:1472:64), each a point of the sweep")
	fs.Var(flagvalue.Size(&f.response), "response-size", "response size in bytes, e.g. 1472 or 8K (default: the request's size)")
	fs.VarP(flagvalue.Duration(&s.Duration), "time", "t", "how long each size runs (0 with --count: by count only)")
	fs.Int64Var(&s.RRCount, "count", 0, "transactions per size (with -t too, whichever ends first)")
	fs.Var(flagvalue.Duration(&s.RRInterval), "interval", "gap between requests: 0 sends each as the last response arrives; else an isochronous schedule (e.g. 10ms)")
	fs.BoolVar(&s.RRBusyPoll, "busy-poll", false, "spin on the socket instead of blocking, on both ends (lowest latency; costs a core each; sets SO_BUSY_POLL where permitted)")
	fs.Var(flagvalue.Duration(&f.timeout), "timeout", "UDP: a response later than this counts as lost (default adapts: at least 200ms, 4 × the largest RTT)")
	fs.BoolVar(&s.HostCounters, "host-counters", false, "report each host's per-CPU time split and busiest interrupt lines over the test")
	fs.VarP(flagvalue.Size(&s.Window), "window", "w", "socket buffers (SO_SNDBUF and SO_RCVBUF) on both ends")
	fs.Var(flagvalue.TOS(&s.TOS), "tos", "IP type-of-service byte")
	fs.Var(flagvalue.DSCP(&s.TOS), "dscp", "DSCP code point, a number or a name such as EF")
	fs.StringVarP(&f.bind, "bind", "B", "", "local address for the client's sockets")
	fs.StringVarP(&s.Title, "title", "T", "", "prefix every output line with this title")
	fs.BoolVarP(&f.json, "json", "J", false, "one JSON document: both ends' figures and the full histograms")
	fs.StringVar(&f.load, "load", "", "latency under load: PROTO,STREAMS[,up|down|both][,RATE], e.g. tcp,4 or udp,2,down,300m — probes before, during and after a bulk test")
	fs.Var(flagvalue.Duration(&f.loadTime), "load-time", "how long the load runs")
	fs.Var(flagvalue.Duration(&f.loadIdle), "load-idle", "probes alone before the load")
	fs.Var(flagvalue.Duration(&f.loadAfter), "load-after", "probes alone after the load")
	fs.Var(flagvalue.Duration(&f.connectTimeout), "connect-timeout", "give up connecting after this long")
	fs.StringVar(&f.logfile, "logfile", "", "write the report to this file instead of stdout (appends)")
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "diagnostic log format: text or json")
	f.security.register(fs)
}

// finish turns the flags into a validated spec.
func (f *rrFlags) finish(cmd *cobra.Command) error {
	changed := cmd.Flags().Changed
	s := &f.spec
	n := 0
	for _, on := range []bool{f.udp, f.tcp, f.crr} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return usagef("--udp, --tcp and --crr: choose one")
	case f.tcp:
		s.RRMode = spec.RRTCP
	case f.crr:
		s.RRMode = spec.RRCRR
	default:
		s.RRMode = spec.RRUDP
	}
	sizes, err := rr.ParseSizes(f.sizes)
	if err != nil {
		return usagef("--sizes %s: %v", f.sizes, err)
	}
	s.RRSizes = spec.FormatRRSizes(sizes...)
	if f.response < 0 || f.response > int64(spec.RRMaxTCPSize) {
		return usagef("--response-size %d: out of range", f.response)
	}
	s.RRResponse = int(f.response)
	if changed("count") && !changed("time") {
		s.Duration = 0 // by count only
	}
	if f.port < 1 || f.port > 65535 {
		return usagef("-p %d: want 1 to 65535", f.port)
	}
	if f.connectTimeout <= 0 {
		return usagef("--connect-timeout: must be positive")
	}
	if f.timeout < 0 {
		return usagef("--timeout: must not be negative")
	}
	if f.load != "" {
		if len(sizes) != 1 {
			return usagef("--load: give one --sizes value for the probes")
		}
		if !changed("interval") {
			s.RRInterval = defaultLoadProbeTick
		}
		if _, err := f.loadSpec(); err != nil {
			return err
		}
		s.RRCount = 0
		s.Duration = f.loadIdle + f.loadTime + f.loadAfter
	} else {
		for _, name := range []string{"load-time", "load-idle", "load-after"} {
			if changed(name) {
				return usagef("--%s applies with --load", name)
			}
		}
	}
	if err := s.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// loadSpec parses --load: PROTO,STREAMS[,up|down|both][,RATE]. A UDP
// load needs a rate (per stream, as -b); a TCP load may have one (paced).
func (f *rrFlags) loadSpec() (spec.Spec, error) {
	const want = "want PROTO,STREAMS[,up|down|both][,RATE], e.g. tcp,4 or udp,2,down,300m"
	parts := strings.Split(f.load, ",")
	bad := func(why string) (spec.Spec, error) {
		return spec.Spec{}, usagef("--load %s: %s (%s)", f.load, why, want)
	}
	if len(parts) < 2 || len(parts) > 4 {
		return bad("wrong number of fields")
	}
	ls := spec.Default()
	switch strings.ToLower(parts[0]) {
	case spec.TCP:
	case spec.UDP:
		ls.Protocol = spec.UDP
		ls.Length = spec.DefaultUDPLength
	default:
		return bad("the protocol must be tcp or udp")
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 1 || n > spec.MaxStreams {
		return bad(fmt.Sprintf("streams: want 1 to %d", spec.MaxStreams))
	}
	ls.Streams = n
	ls.Duration = f.loadTime
	ls.Interval = 0
	// After STREAMS: a direction, a rate, or a direction then a rate.
	for i, p := range parts[2:] {
		last := i == len(parts)-3
		switch strings.ToLower(p) {
		case "up":
			continue
		case "down":
			ls.Reverse = true
			continue
		case "both":
			ls.Bidir = true
			continue
		}
		if !last {
			return bad("direction: want up, down or both")
		}
		rate, err := units.ParseRate(p)
		if err != nil || rate <= 0 {
			return bad("want a direction (up, down or both) or a rate such as 300m")
		}
		ls.Rate = rate
	}
	if ls.Protocol == spec.UDP && ls.Rate == 0 {
		return bad("a UDP load needs a rate")
	}
	if err := ls.Validate(); err != nil {
		return bad(err.Error())
	}
	return ls, nil
}

func newRRCmd(e env) *cobra.Command {
	f := newRRFlags()
	cmd := &cobra.Command{
		Use:   "rr HOST",
		Short: "Measure request-response latency against a wireperf server (UDPmon's req_resp, netperf's *_RR)",
		Example: `  wireperf rr host                          5 s of 64-byte UDP ping-pong
  wireperf rr host --sizes 64,512,1472      a sweep of request sizes
  wireperf rr host --tcp --response-size 8K  64-byte requests, 8 KiB answers on TCP
  wireperf rr host --crr --count 10000      a new connection per transaction
  wireperf rr host --interval 10ms -t 60    isochronous probes for a minute
  wireperf rr host --busy-poll              spin instead of blocking, for the lowest latency
  wireperf rr host --load tcp,4             RTT idle, under 4 TCP streams, and after
  wireperf rr host --load udp,1,down,500m   the same under a 500 Mbit/s UDP flow`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("rr needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(cmd); err != nil {
				return err
			}
			return runRR(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

// config is the client's configuration for a test against host, key and
// TLS included.
func (f *rrFlags) config(host string, log *slog.Logger) (rrcontrol.Config, error) {
	cfg := rrcontrol.Config{ClientConfig: session.ClientConfig{
		Host: host, Port: f.port, Bind: f.bind, ConnectTimeout: f.connectTimeout, Spec: f.spec, Logger: log,
	}, Timeout: f.timeout}
	return cfg, f.security.apply(&cfg.ClientConfig)
}

func runRR(ctx context.Context, e env, f *rrFlags, host string) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	log, out, ctx := rio.log, rio.out, rio.ctx
	cfg, err := f.config(host, log)
	if err != nil {
		return err
	}
	var res *result.Result
	var runErr error
	if f.load == "" {
		// The probes run on one locked thread, and the rest of the client
		// is idle. With more Ps, each response that wakes the probe's
		// thread also wakes the runtime's monitor (a second context switch
		// per transaction, measured with perf stat); one P avoids it and
		// leaves the CPUs to the probe and the kernel.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	if f.load != "" {
		ls, _ := f.loadSpec()
		res, runErr = rrload.Run(ctx, rrload.Config{
			Probe: cfg, Idle: f.loadIdle, After: f.loadAfter, Load: ls,
		})
	} else {
		res, runErr = rrcontrol.Run(ctx, cfg)
	}
	if res == nil {
		return runErr
	}
	var werr error
	if f.json {
		werr = (&emit.RRJSON{W: out}).Write(res)
	} else {
		werr = (&emit.RRText{W: out, Opt: emit.Options{Title: f.spec.Title}}).Write(res)
	}
	if runErr == nil && werr != nil {
		runErr = fmt.Errorf("writing the report: %w", werr)
	}
	return runErr
}
