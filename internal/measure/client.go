package measure

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/strftime"
	"github.com/wireperf/wireperf/internal/units"
)

// Client is a bulk test (wireperf client, -c): its flags, iperf's names
// where iperf has one. Spec is the test both ends run; the rest says how
// the client reaches the server and shows the result.
type Client struct {
	Spec           spec.Spec
	Port           int
	Bind           string
	CPort          int
	ConnectTimeout time.Duration
	Length         int64
	Format         units.Format
	JSON           bool
	JSONStream     bool
	// ReportStyle is -y: "C" writes iperf2's CSV lines; "" the usual text.
	ReportStyle string
	// Enhanced is -e: iperf2's enhanced text (Write/Err, Rtry, Cwnd/RTT,
	// NetPwr columns).
	Enhanced   bool
	UDP        bool
	Bitrate    string
	Iperf3     bool
	RetryBusy  time.Duration
	Counters64 bool
	// TCPInfoInterval is --tcpinfo-interval (0 turns the timeline off);
	// Finish puts it in Spec.
	TCPInfoInterval time.Duration
	// Bottleneck is --bottleneck, checked by Finish; BottleneckBps its rate.
	Bottleneck    string
	BottleneckBps float64

	// iperf3's flags (client_iperf3.go). IPv4 and IPv6 are -4 and -6.
	IPv4, IPv6 bool
	// Affinity is -A n[,m]; ClientCPU and ServerCPU are its CPUs, NoCPU
	// when not asked for.
	Affinity             string
	ClientCPU, ServerCPU int
	// BindDevice is -X: the interface every socket is bound to.
	BindDevice string
	// FlowLabel is -L as given; Finish puts it in Spec.
	FlowLabel string
	// ControlKeepAlive is --cntl-ka.
	ControlKeepAlive KeepAlive
	// RcvTimeoutMS is --rcv-timeout; RcvTimeout the same as a duration.
	RcvTimeoutMS int64
	RcvTimeout   time.Duration
	// SndTimeoutMS is --snd-timeout; Finish puts it in Spec.SndTimeout.
	SndTimeoutMS int64
	// File is -F: the data the sender sends, or where the receiver
	// writes what it receives.
	File string
	// iperf3's output habits. GetServerOutput asks the server for its
	// own report, shown after the client's. Timestamps is the strftime
	// format that starts every text line ("" for none); ForceFlush
	// flushes the output after every line; Verbose (-V) adds iperf3's
	// verbose lines to the text.
	GetServerOutput bool
	Timestamps      string
	ForceFlush      bool
	Verbose         bool
}

// NewClient is a client test with every default.
func NewClient() *Client {
	return &Client{
		Spec:            spec.Default(),
		Port:            spec.DefaultPort,
		ConnectTimeout:  spec.DefaultConnectTO,
		Length:          spec.DefaultTCPLength,
		Format:          'a',
		TCPInfoInterval: spec.DefaultTCPInfoInterval,
		ClientCPU:       NoCPU,
		ServerCPU:       NoCPU,
		RcvTimeoutMS:    DefaultRcvTimeout.Milliseconds(),
		RcvTimeout:      DefaultRcvTimeout,
	}
}

// Register adds the client test's flags to fs.
func (c *Client) Register(fs *pflag.FlagSet) {
	s := &c.Spec
	fs.IntVarP(&c.Port, "port", "p", c.Port, "server port")
	fs.VarP(flagvalue.Duration(&s.Duration), "time", "t", "test length: seconds, or a duration such as 90s or 30m (0 with -n: until the bytes are sent)")
	fs.VarP(flagvalue.Size(&s.Bytes), "bytes", "n", "stop after this many bytes per direction, across streams (e.g. 1G)")
	fs.VarP(flagvalue.Duration(&s.Interval), "interval", "i", "seconds between interval reports, fractions allowed; 0 turns them off")
	fs.VarP(flagvalue.Duration(&s.Omit), "omit", "O", "run this long first, left out of the totals (slow start); -t is measured after it")
	fs.IntVarP(&s.Streams, "parallel", "P", s.Streams, "parallel streams")
	fs.BoolVarP(&c.UDP, "udp", "u", false, "UDP instead of TCP")
	fs.StringVarP(&c.Bitrate, "bitrate", "b", "", "rate per stream in bit/s, k m g t powers of 1000 in either case as iperf3 (1G = 10^9): UDP RATE or RATE/BURST (e.g. 750m, 10G/32; 0 = as fast as possible; default 1m); TCP paces with the kernel")
	fs.Int64Var(&s.PPS, "pps", 0, "UDP: datagrams per second per stream, instead of -b")
	fs.Var(flagvalue.Duration(&s.Spacing), "spacing", "UDP: a fixed gap between datagrams, e.g. 12us (UDPmon's method), instead of -b")
	fs.BoolVar(&s.Spin, "spin", false, "UDP with --spacing: busy-wait the last microseconds of each gap for exact gaps, at the cost of a core (reported)")
	fs.BoolVar(&s.NoGSO, "no-gso", false, "UDP: no segmentation offload (GSO) on send nor GRO on receive")
	fs.Var(flagvalue.Duration(&s.LateThreshold), "late-threshold", "UDP: a missing datagram counts as lost after this long (2s)")
	fs.BoolVarP(&s.Reverse, "reverse", "R", false, "the server sends, the client receives")
	fs.BoolVar(&s.Bidir, "bidir", false, "both ends send at once")
	fs.VarP(flagvalue.Size(&s.Window), "window", "w", "socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends, e.g. 16M; turns off autotuning")
	fs.VarP(flagvalue.Size(&c.Length), "length", "l", "bytes per write and per read")
	fs.IntVarP(&s.MSS, "set-mss", "M", 0, "TCP maximum segment size (TCP_MAXSEG)")
	fs.BoolVarP(&s.ZeroCopy, "zerocopy", "Z", false, "TCP senders hand data to the kernel with sendfile, without a user-space copy")
	fs.BoolVarP(&s.NoDelay, "no-delay", "N", false, "turn off Nagle's algorithm (TCP_NODELAY)")
	fs.StringVarP(&s.Congestion, "congestion", "C", "", "congestion control algorithm on both ends (e.g. cubic, bbr, reno)")
	fs.VarP(flagvalue.TOS(&s.TOS), "tos", "S", "IP type-of-service byte (decimal, 0x hex or 0 octal)")
	fs.Var(flagvalue.DSCP(&s.TOS), "dscp", "DSCP code point, a number or a name such as EF or AF41")
	fs.StringVarP(&c.Bind, "bind", "B", "", "local address for the client's connections")
	fs.IntVar(&c.CPort, "cport", 0, "local port of the first data connection (the next streams take the next ports)")
	fs.StringVarP(&s.Title, "title", "T", "", "prefix every output line with this title")
	fs.VarP(flagvalue.Format(&c.Format), "format", "f", "units: a adaptive, b k m g t bits, B K M G T bytes")
	fs.BoolVarP(&c.JSON, "json", "J", false, "one JSON document in iperf3's layout")
	fs.BoolVar(&c.JSONStream, "json-stream", false, "one JSON object per line as the test runs")
	fs.StringVarP(&c.ReportStyle, "reportstyle", "y", "", "C: iperf2's CSV lines (-y C) instead of text")
	fs.BoolVarP(&c.Enhanced, "enhanced", "e", false, "iperf2's enhanced text: Write/Err, Rtry, Cwnd/RTT(var) and NetPwr columns")
	fs.BoolVar(&c.Spec.TripTimes, "trip-times", false, "TCP: stamp each block (-l) with its send time; receivers report write-to-read latency (iperf2's; needs synchronised clocks, wireperf servers only)")
	fs.BoolVar(&c.Iperf3, "iperf3", false, "speak iperf3's protocol (found on its own when the server is iperf3)")
	fs.Var(flagvalue.Duration(&c.RetryBusy), "retry-busy", "iperf3 servers: retry a busy server with backoff for up to this long")
	fs.BoolVar(&c.Counters64, "udp-counters-64bit", false, "iperf3 servers: 64-bit UDP sequence numbers")
	fs.Var(flagvalue.Duration(&c.TCPInfoInterval), "tcpinfo-interval", "TCP_INFO timeline period per sending stream; 0 turns the timeline off")
	fs.StringVar(&c.Bottleneck, "bottleneck", "", "the path's bottleneck rate in bit/s (e.g. 1g; 1G is also 10^9), for the RFC 6349 Transfer Time Ratio")
	fs.Var(flagvalue.Duration(&c.ConnectTimeout), "connect-timeout", "give up connecting after this long (seconds, or e.g. 500ms)")
	c.registerIperf3Habits(fs)

	// iperf3's output habits, in one block.
	fs.BoolVar(&c.GetServerOutput, "get-server-output", false, "show the server's own report of the test after the client's (iperf3's --get-server-output)")
	fs.StringVar(&c.Timestamps, "timestamps", "", "start every text line with the time, in this strftime format (%c %Y %m %d %H %M %S %s %T %F %z %%; default \"%c \")")
	fs.Lookup("timestamps").NoOptDefVal = strftime.IperfDefault
	fs.BoolVar(&c.ForceFlush, "forceflush", false, "flush the output after every line (when it goes to a pipe)")
	fs.BoolVarP(&c.Verbose, "verbose", "V", false, "more detail: the version, the system, the test's parameters, CPU use")
}

// Finish turns the parsed flags (fs is the set Register filled) into a
// checked spec.
func (c *Client) Finish(fs *pflag.FlagSet) error {
	if c.Length > int64(spec.MaxLength) || c.Length < 1 {
		return fmt.Errorf("-l %d: want 1 byte to %d bytes", c.Length, spec.MaxLength)
	}
	c.Spec.Length = int(c.Length)
	if err := c.finishUDP(fs); err != nil {
		return err
	}
	if err := c.finishIperf3Habits(fs); err != nil {
		return err
	}
	if fs.Changed("bytes") && !fs.Changed("time") && c.Spec.Bytes > 0 {
		// -n alone: run until the bytes are sent, as iperf does. As in
		// iperf3, -n 0 sets no byte limit, so -t's default applies.
		c.Spec.Duration = 0
	}
	if c.Spec.Duration > 0 {
		c.Spec.Duration += c.Spec.Omit // as iperf3: -O runs before the -t that is reported
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("-p %d: want 1 to 65535", c.Port)
	}
	if c.CPort < 0 || c.CPort+c.Spec.DataConns()-1 > 65535 {
		return fmt.Errorf("--cport %d: the data connections need ports up to 65535", c.CPort)
	}
	if c.JSON && c.JSONStream {
		return fmt.Errorf("--json and --json-stream: choose one")
	}
	switch c.ReportStyle {
	case "":
	case "C", "c":
		c.ReportStyle = "C"
	default:
		return fmt.Errorf("-y %q: the one report style is C (iperf2's CSV)", c.ReportStyle)
	}
	if outputs := countTrue(c.JSON, c.JSONStream, c.ReportStyle != "", c.Enhanced); outputs > 1 {
		return fmt.Errorf("--json, --json-stream, -y C and -e each choose the output: give one")
	}
	if c.Timestamps != "" {
		if err := strftime.Check(c.Timestamps); err != nil {
			return fmt.Errorf("--timestamps %q: %v", c.Timestamps, err)
		}
	}
	if c.ConnectTimeout <= 0 {
		return fmt.Errorf("--connect-timeout: must be positive")
	}
	if err := c.finishTCPInfo(); err != nil {
		return err
	}
	return c.Spec.Validate()
}

// finishUDP applies -u and its pacing flags.
func (c *Client) finishUDP(fs *pflag.FlagSet) error {
	changed := fs.Changed
	if !c.UDP {
		for _, name := range []string{"pps", "spacing", "spin", "no-gso", "late-threshold"} {
			if changed(name) {
				return fmt.Errorf("--%s applies to UDP tests (-u)", name)
			}
		}
		if c.Bitrate != "" { // TCP: the kernel paces each stream (SO_MAX_PACING_RATE)
			rate, burst, err := units.ParseRateBurst(c.Bitrate)
			if err != nil {
				return fmt.Errorf("-b %s: %v", c.Bitrate, err)
			}
			if burst != 0 {
				return fmt.Errorf("-b %s: a burst applies to UDP only", c.Bitrate)
			}
			c.Spec.Rate = rate
		}
		return nil
	}
	c.Spec.Protocol = spec.UDP
	if !changed("length") {
		c.Spec.Length = spec.DefaultUDPLength
	}
	if c.Bitrate != "" {
		rate, burst, err := units.ParseRateBurst(c.Bitrate)
		if err != nil {
			return fmt.Errorf("-b %s: %v", c.Bitrate, err)
		}
		c.Spec.Rate, c.Spec.Burst = rate, burst
	} else if !changed("pps") && !changed("spacing") {
		c.Spec.Rate = 1e6 // iperf3's default: a UDP test must never flood by accident
	}
	return nil
}

// finishTCPInfo puts the TCP_INFO sampling period in the spec, which both
// ends follow, and checks --bottleneck.
func (c *Client) finishTCPInfo() error {
	if t := c.TCPInfoInterval; t < 0 || t > 0 && t < spec.MinTCPInfoInterval {
		return fmt.Errorf("--tcpinfo-interval %v: want 0 (off) or at least %v", t, spec.MinTCPInfoInterval)
	}
	c.Spec.TCPInfoInterval = c.TCPInfoInterval
	if c.TCPInfoInterval == 0 {
		c.Spec.TCPInfoInterval = -1 // off; 0 in a spec is the default
	}
	if c.Bottleneck != "" {
		r, err := ParseBottleneck(c.Bottleneck)
		if err != nil {
			return err
		}
		c.BottleneckBps = r
	}
	return nil
}

// ParseBottleneck reads --bottleneck: a positive rate.
func ParseBottleneck(s string) (float64, error) {
	r, err := units.ParseRate(s)
	if err != nil || r <= 0 {
		return 0, fmt.Errorf("--bottleneck %s: want a rate such as 1g or 622m", s)
	}
	return r, nil
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
