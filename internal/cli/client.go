package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// clientFlags are the client command's flags, iperf's names where iperf
// has one.
type clientFlags struct {
	spec           spec.Spec
	port           int
	bind           string
	cport          int
	connectTimeout time.Duration
	length         int64
	format         units.Format
	json           bool
	jsonStream     bool
	logfile        string
	log            logOptions
	udp            bool
	bitrate        string
	iperf3         bool
	retryBusy      time.Duration
	counters64     bool
	tcpinfo        tcpInfoFlags   // --tcpinfo-interval, --tcpinfo-csv, --bottleneck (advise.go)
	security       clientSecurity // --auth-key-file, --tls-ca, --tls-pin (security.go)
	save           bool           // --save: store the run in the archive (save.go)
	db             string
}

func newClientFlags() *clientFlags {
	return &clientFlags{
		spec:           spec.Default(),
		port:           spec.DefaultPort,
		connectTimeout: spec.DefaultConnectTO,
		length:         spec.DefaultTCPLength,
		format:         'a',
		log:            logOptions{level: "warn", format: "text"},
		tcpinfo:        newTCPInfoFlags(),
	}
}

func (f *clientFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	s := &f.spec
	fs.IntVarP(&f.port, "port", "p", f.port, "server port")
	fs.VarP(flagvalue.Duration(&s.Duration), "time", "t", "test length: seconds, or a duration such as 90s or 30m (0 with -n: until the bytes are sent)")
	fs.VarP(flagvalue.Size(&s.Bytes), "bytes", "n", "stop after this many bytes per direction, across streams (e.g. 1G)")
	fs.VarP(flagvalue.Duration(&s.Interval), "interval", "i", "seconds between interval reports, fractions allowed; 0 turns them off")
	fs.VarP(flagvalue.Duration(&s.Omit), "omit", "O", "run this long first, left out of the totals (slow start); -t is measured after it")
	fs.IntVarP(&s.Streams, "parallel", "P", s.Streams, "parallel streams")
	fs.BoolVarP(&f.udp, "udp", "u", false, "UDP instead of TCP")
	fs.StringVarP(&f.bitrate, "bitrate", "b", "", "rate per stream: UDP RATE or RATE/BURST (e.g. 750m, 10G/32; 0 = as fast as possible; default 1m); TCP paces with the kernel")
	fs.Int64Var(&s.PPS, "pps", 0, "UDP: datagrams per second per stream, instead of -b")
	fs.Var(flagvalue.Duration(&s.Spacing), "spacing", "UDP: a fixed gap between datagrams, e.g. 12us (UDPmon's method), instead of -b")
	fs.BoolVar(&s.Spin, "spin", false, "UDP with --spacing: busy-wait the last microseconds of each gap for exact gaps, at the cost of a core (reported)")
	fs.BoolVar(&s.NoGSO, "no-gso", false, "UDP: no segmentation offload (GSO) on send nor GRO on receive")
	fs.Var(flagvalue.Duration(&s.LateThreshold), "late-threshold", "UDP: a missing datagram counts as lost after this long (2s)")
	fs.BoolVarP(&s.Reverse, "reverse", "R", false, "the server sends, the client receives")
	fs.BoolVar(&s.Bidir, "bidir", false, "both ends send at once")
	fs.VarP(flagvalue.Size(&s.Window), "window", "w", "socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends, e.g. 16M; turns off autotuning")
	fs.VarP(flagvalue.Size(&f.length), "length", "l", "bytes per write and per read")
	fs.IntVarP(&s.MSS, "set-mss", "M", 0, "TCP maximum segment size (TCP_MAXSEG)")
	fs.BoolVarP(&s.ZeroCopy, "zerocopy", "Z", false, "TCP senders hand data to the kernel with sendfile, without a user-space copy")
	fs.BoolVarP(&s.NoDelay, "no-delay", "N", false, "turn off Nagle's algorithm (TCP_NODELAY)")
	fs.StringVarP(&s.Congestion, "congestion", "C", "", "congestion control algorithm on both ends (e.g. cubic, bbr, reno)")
	fs.Var(flagvalue.TOS(&s.TOS), "tos", "IP type-of-service byte (decimal, 0x hex or 0 octal)")
	fs.Var(flagvalue.DSCP(&s.TOS), "dscp", "DSCP code point, a number or a name such as EF or AF41")
	fs.StringVarP(&f.bind, "bind", "B", "", "local address for the client's connections")
	fs.IntVar(&f.cport, "cport", 0, "local port of the first data connection (the next streams take the next ports)")
	fs.StringVarP(&s.Title, "title", "T", "", "prefix every output line with this title")
	fs.VarP(flagvalue.Format(&f.format), "format", "f", "units: a adaptive, b k m g t bits, B K M G T bytes")
	fs.BoolVarP(&f.json, "json", "J", false, "one JSON document in iperf3's layout")
	fs.BoolVar(&f.jsonStream, "json-stream", false, "one JSON object per line as the test runs")
	fs.BoolVar(&f.iperf3, "iperf3", false, "speak iperf3's protocol (found on its own when the server is iperf3)")
	fs.Var(flagvalue.Duration(&f.retryBusy), "retry-busy", "iperf3 servers: retry a busy server with backoff for up to this long")
	fs.BoolVar(&f.counters64, "udp-counters-64bit", false, "iperf3 servers: 64-bit UDP sequence numbers")
	fs.StringVar(&f.logfile, "logfile", "", "write the report to this file instead of stdout (appends)")
	fs.Var(flagvalue.Duration(&f.tcpinfo.interval), "tcpinfo-interval", "TCP_INFO timeline period per sending stream; 0 turns the timeline off")
	fs.StringVar(&f.tcpinfo.csv, "tcpinfo-csv", "", "write the TCP_INFO timelines to this CSV file")
	fs.StringVar(&f.tcpinfo.bottleneck, "bottleneck", "", "the path's bottleneck rate (e.g. 1g), for the RFC 6349 Transfer Time Ratio")
	fs.Var(flagvalue.Duration(&f.connectTimeout), "connect-timeout", "give up connecting after this long (seconds, or e.g. 500ms)")
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "diagnostic log format: text or json")
	f.security.register(fs)
	fs.BoolVar(&f.save, "save", false, "store the run in the archive (see --db), as a campaign's runs are")
	dbFlag(cmd, &f.db)
}

// finish turns the flags into a validated spec.
func (f *clientFlags) finish(cmd *cobra.Command) error {
	if f.length > int64(spec.MaxLength) || f.length < 1 {
		return usagef("-l %d: want 1 byte to %d bytes", f.length, spec.MaxLength)
	}
	f.spec.Length = int(f.length)
	if err := f.finishUDP(cmd); err != nil {
		return err
	}
	if cmd.Flags().Changed("bytes") && !cmd.Flags().Changed("time") && f.spec.Bytes > 0 {
		// -n alone: run until the bytes are sent, as iperf does. As in
		// iperf3, -n 0 sets no byte limit, so -t's default applies.
		f.spec.Duration = 0
	}
	if f.spec.Duration > 0 {
		f.spec.Duration += f.spec.Omit // as iperf3: -O runs before the -t that is reported
	}
	if f.port < 1 || f.port > 65535 {
		return usagef("-p %d: want 1 to 65535", f.port)
	}
	if f.cport < 0 || f.cport+f.spec.DataConns()-1 > 65535 {
		return usagef("--cport %d: the data connections need ports up to 65535", f.cport)
	}
	if f.json && f.jsonStream {
		return usagef("--json and --json-stream: choose one")
	}
	if f.connectTimeout <= 0 {
		return usagef("--connect-timeout: must be positive")
	}
	if err := f.spec.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// finishUDP applies -u and its pacing flags.
func (f *clientFlags) finishUDP(cmd *cobra.Command) error {
	changed := cmd.Flags().Changed
	if !f.udp {
		for _, name := range []string{"pps", "spacing", "spin", "no-gso", "late-threshold"} {
			if changed(name) {
				return usagef("--%s applies to UDP tests (-u)", name)
			}
		}
		if f.bitrate != "" { // TCP: the kernel paces each stream (SO_MAX_PACING_RATE)
			rate, burst, err := units.ParseRateBurst(f.bitrate)
			if err != nil {
				return usagef("-b %s: %v", f.bitrate, err)
			}
			if burst != 0 {
				return usagef("-b %s: a burst applies to UDP only", f.bitrate)
			}
			f.spec.Rate = rate
		}
		return nil
	}
	f.spec.Protocol = spec.UDP
	if !changed("length") {
		f.spec.Length = spec.DefaultUDPLength
	}
	if f.bitrate != "" {
		rate, burst, err := units.ParseRateBurst(f.bitrate)
		if err != nil {
			return usagef("-b %s: %v", f.bitrate, err)
		}
		f.spec.Rate, f.spec.Burst = rate, burst
	} else if !changed("pps") && !changed("spacing") {
		f.spec.Rate = 1e6 // iperf3's default: a UDP test must never flood by accident
	}
	return nil
}

func (f *clientFlags) emitter(w io.Writer) emit.Emitter {
	opt := emit.Options{Format: f.format, Title: f.spec.Title}
	switch {
	case f.json:
		return &emit.JSON{W: w, Opt: opt}
	case f.jsonStream:
		return &emit.JSONStream{W: w, Opt: opt}
	default:
		return &emit.Text{W: w, Opt: opt}
	}
}

func newClientCmd(e env) *cobra.Command {
	f := newClientFlags()
	cmd := &cobra.Command{
		Use:   "client HOST",
		Short: "Run a test against a wireperf server (also: wireperf -c HOST)",
		Example: `  wireperf -c host                       10 s of TCP, client to server
  wireperf -c host -w 16M -t 1800 -i 15  30 minutes in 15 s intervals, a 16 MiB window
  wireperf -c host -P 4 -R               four streams, server to client
  wireperf -c host --bidir -J            both ways at once, iperf3 JSON`,
		Args: exactlyOneHost,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(cmd); err != nil {
				return err
			}
			return runClient(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

func exactlyOneHost(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return usagef("say which server to test: wireperf -c HOST")
	case 1:
		return nil
	}
	return usagef("client needs exactly one HOST (got %d arguments: %s)", len(args), strings.Join(args, " "))
}

func runClient(ctx context.Context, e env, f *clientFlags, host string) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	log, out, ctx := rio.log, rio.out, rio.ctx
	em := f.emitter(out)
	obs := &observer{em: em, host: host, port: f.port}
	if err := f.tcpinfo.prepare(&f.spec); err != nil {
		return err
	}
	if f.save { // an archive that can't be opened fails before the test, not after it
		if err := checkArchiveFor(ctx, f.db, ""); err != nil {
			return err
		}
	}
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	res, runErr := runTest(ctx, e, f, host, obs, log)
	if err := f.tcpinfo.apply(res); err != nil && runErr == nil {
		runErr = err
	}
	if res != nil {
		if line := router.Behind(time.Now(), 2500*time.Millisecond); line != "" {
			res.Warnings = append(res.Warnings, line)
		}
		if err := em.Summary(res); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr == nil {
		runErr = obs.err
	}
	if f.save {
		id, err := saveRun(ctx, f.db, res, runErr, os.Args)
		if err != nil {
			return errors.Join(runErr, fmt.Errorf("saving the run: %w", err))
		}
		fmt.Fprintf(e.stderr, "saved as run %s\n", id)
	}
	return runErr
}

// runTest runs the test in wireperf's protocol, or in iperf3's when asked
// or when the server turns out to be iperf3.
func runTest(ctx context.Context, e env, f *clientFlags, host string, obs *observer, log *slog.Logger) (*result.Result, error) {
	ip3 := iperf3.ClientConfig{
		Host: host, Port: f.port, Bind: f.bind, CPort: f.cport, ConnectTimeout: f.connectTimeout, Spec: f.spec,
		Observer: obs, Logger: log, RetryBusy: f.retryBusy, UDPCounters64: f.counters64,
	}
	if f.iperf3 {
		return iperf3.RunClient(ctx, ip3)
	}
	cfg := session.ClientConfig{
		Host: host, Port: f.port, Bind: f.bind, CPort: f.cport,
		ConnectTimeout: f.connectTimeout, Spec: f.spec, Observer: obs, Logger: log,
	}
	if err := f.security.apply(&cfg); err != nil {
		return nil, err
	}
	cfg.Iperf3 = func(ctx context.Context, srv session.Iperf3Server) (*result.Result, error) {
		fmt.Fprintf(e.stderr, "%s is an iperf3 server; switching to iperf3 mode\n", srv.Addr)
		if srv.Conn != nil {
			return iperf3.RunClientOn(ctx, srv.Conn, srv.Sent, ip3)
		}
		return iperf3.RunClient(ctx, ip3)
	}
	return session.RunClient(ctx, cfg)
}

// observer shows a running test through an emitter.
type observer struct {
	em   emit.Emitter
	host string
	port int
	err  error
}

func (o *observer) Started(r *result.Result) {
	o.keep(o.em.Header(headerOf(r, o.host, o.port)))
}

func (o *observer) Interval(r *result.Result, row result.IntervalRow) {
	o.keep(o.em.Interval(r, row))
}

func (o *observer) keep(err error) {
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("writing the report: %w", err)
	}
}

// headerOf describes a test that is about to start.
func headerOf(r *result.Result, host string, port int) emit.Header {
	h := emit.HeaderFromResult(r)
	h.ServerAddr = fmt.Sprintf("%s port %d", strings.Trim(host, "[]"), port)
	return h
}
