package measure

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/measure/testflags"
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
	// JSONStreamFull is --json-stream-full-output: after the stream's
	// lines, -J's document.
	JSONStreamFull bool
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
	// TTL is --ttl: a multicast sender's TTL (IPv6 hop limit), 1 to 255;
	// 0 when not given (runner/mcastrun's rule then reads -T as iperf 2
	// does, or takes iperf 2's 1).
	TTL int
	// Isochronous is --isochronous (FPS:MEAN,STDEV, "" when not given)
	// and IPGms --ipg, in milliseconds: runner/mcastrun reads them.
	Isochronous string
	IPGms       float64
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

// Register adds the test's flags to fs: those testflags.Client declares
// and the command line doesn't bind (see RegisterCommand).
func (c *Client) Register(fs *pflag.FlagSet) {
	testflags.Register(fs, testflags.Measured(testflags.Client), c.binds())
}

// RegisterCommand adds every flag of the client command to fs: the test's
// and the command line's own, bound as own says, with the flags a
// helper shared by several commands registered on shared (--db, the
// key and TLS flags).
func (c *Client) RegisterCommand(fs *pflag.FlagSet, own Binds, shared *pflag.FlagSet) {
	testflags.Register(fs, testflags.Client, c.binds().With(own).With(testflags.Adopt(shared)))
}

// binds is what each of the test's flags sets.
func (c *Client) binds() testflags.Binds {
	s := &c.Spec
	return testflags.Binds{
		"port":                    &c.Port,
		"time":                    flagvalue.Duration(&s.Duration),
		"bytes":                   flagvalue.Size(&s.Bytes),
		"interval":                flagvalue.Duration(&s.Interval),
		"omit":                    flagvalue.Duration(&s.Omit),
		"parallel":                &s.Streams,
		"udp":                     &c.UDP,
		"bitrate":                 &c.Bitrate,
		"pps":                     &s.PPS,
		"spacing":                 flagvalue.Duration(&s.Spacing),
		"spin":                    &s.Spin,
		"no-gso":                  &s.NoGSO,
		"late-threshold":          flagvalue.Duration(&s.LateThreshold),
		"reverse":                 &s.Reverse,
		"bidir":                   &s.Bidir,
		"window":                  flagvalue.Size(&s.Window),
		"length":                  flagvalue.Size(&c.Length),
		"set-mss":                 &s.MSS,
		"zerocopy":                &s.ZeroCopy,
		"no-delay":                &s.NoDelay,
		"congestion":              &s.Congestion,
		"tos":                     flagvalue.TOS(&s.TOS),
		"dscp":                    flagvalue.DSCP(&s.TOS),
		"bind":                    &c.Bind,
		"cport":                   &c.CPort,
		"title":                   &s.Title,
		"format":                  flagvalue.Format(&c.Format),
		"json":                    &c.JSON,
		"json-stream":             &c.JSONStream,
		"json-stream-full-output": &c.JSONStreamFull,
		"extra-data":              &s.ExtraData,
		"repeating-payload":       &s.RepeatingPayload,
		"skip-rx-copy":            &s.SkipRxCopy,
		"reportstyle":             &c.ReportStyle,
		"enhanced":                &c.Enhanced,
		"iperf3":                  &c.Iperf3,
		"retry-busy":              flagvalue.Duration(&c.RetryBusy),
		"udp-counters-64bit":      &c.Counters64,
		"tcpinfo-interval":        flagvalue.Duration(&c.TCPInfoInterval),
		"bottleneck":              &c.Bottleneck,
		"connect-timeout":         flagvalue.Duration(&c.ConnectTimeout),
		"get-server-output":       &c.GetServerOutput,
		"timestamps":              &c.Timestamps,
		"forceflush":              &c.ForceFlush,
		"verbose":                 &c.Verbose,
		"version4":                &c.IPv4,
		"version6":                &c.IPv6,
		"blockcount":              flagvalue.Size(&s.Blocks),
		"affinity":                &c.Affinity,
		"xbind":                   &c.BindDevice,
		"fq-rate":                 flagvalue.Rate(&s.FQRate),
		"dont-fragment":           &s.DontFragment,
		"flowlabel":               &c.FlowLabel,
		"cntl-ka":                 &c.ControlKeepAlive,
		"rcv-timeout":             &c.RcvTimeoutMS,
		"snd-timeout":             &c.SndTimeoutMS,
		"mptcp":                   &s.MPTCP,
		"trip-times":              &s.TripTimes,
		"ttl":                     &c.TTL,
		"isochronous":             &c.Isochronous,
		"ipg":                     &c.IPGms,
		"file":                    &c.File,
	}
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
	if c.JSONStreamFull && !c.JSONStream {
		return fmt.Errorf("--json-stream-full-output goes with --json-stream")
	}
	if c.Spec.SkipRxCopy && c.File != "" {
		return fmt.Errorf("--skip-rx-copy and -F: choose one (the receiver would write data it never read)")
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
	if fs.Changed("ttl") && (c.TTL < 1 || c.TTL > 255 || !c.UDP) {
		return fmt.Errorf("--ttl %d: a multicast UDP test's (-u) TTL, 1 to 255", c.TTL)
	}
	return c.Spec.Validate()
}

// finishUDP applies -u and its pacing flags.
func (c *Client) finishUDP(fs *pflag.FlagSet) error {
	changed := fs.Changed
	if !c.UDP {
		for _, name := range []string{"pps", "spacing", "spin", "no-gso", "late-threshold", "isochronous", "ipg"} {
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
	if err := c.finishIsochronous(fs); err != nil {
		return err
	}
	if c.Bitrate != "" {
		rate, burst, err := units.ParseRateBurst(c.Bitrate)
		if err != nil {
			return fmt.Errorf("-b %s: %v", c.Bitrate, err)
		}
		c.Spec.Rate, c.Spec.Burst = rate, burst
	} else if !changed("pps") && !changed("spacing") && c.Spec.Isochronous == nil {
		c.Spec.Rate = 1e6 // iperf3's default: a UDP test must never flood by accident
	}
	return nil
}

// finishIsochronous puts --isochronous and --ipg in the spec: a multicast
// sender's frames (runner/mcastrun) or a unicast UDP test's.
func (c *Client) finishIsochronous(fs *pflag.FlagSet) error {
	if c.Isochronous == "" {
		if fs.Changed("ipg") {
			return errors.New("--ipg: the gap between the datagrams of a frame, with --isochronous")
		}
		return nil
	}
	if c.Bitrate != "" || fs.Changed("pps") || fs.Changed("spacing") {
		return errors.New("--isochronous and -b, --pps or --spacing: choose one (the frames set the rate)")
	}
	f, err := isoch.Parse(c.Isochronous)
	if err != nil {
		return err
	}
	if f.IPG, err = isoch.IPGOf(c.IPGms); err != nil {
		return err
	}
	c.Spec.Isochronous = &f
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
