// Package spec defines the Spec: one value that fully describes a test.
// The client builds it from flags, sends it to the server, and archives it
// beside the Result so that any run can be repeated exactly.
package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wireperf/wireperf/internal/isoch"
)

// Protocols.
const (
	TCP = "tcp"
	UDP = "udp"
)

// Defaults follow iperf3 where our users expect them to.
const (
	DefaultPort     = 5201
	DefaultDuration = 10 * time.Second
	DefaultInterval = time.Second
	// DefaultTCPLength is 1 MiB where iperf3 uses 128 KiB: a system call
	// costs the same for 128 KiB as for 1 MiB, and on a virtual machine
	// (where a system call and a wake-up cost most) 1 MiB blocks halve the
	// CPU each byte takes, so the tool stays off the critical path.
	// 1 MiB is iperf3's largest block, so iperf3 peers accept it.
	DefaultTCPLength  = 1 << 20
	DefaultUDPLength  = 1448 // fits a 1500-byte MTU over IPv4 with room for options
	MaxUDPLength      = 65507
	DefaultLateThresh = 2 * time.Second
	MaxStreams        = 128
	MaxLength         = 16 << 20
	MinInterval       = 10 * time.Millisecond
	// TCP_INFO timelines: the default period, and the shortest a server
	// agrees to (each sample costs ~50 µs of CPU).
	DefaultTCPInfoInterval = 100 * time.Millisecond
	MinTCPInfoInterval     = time.Millisecond
	DefaultConnectTO       = 10 * time.Second
	MaxTitleLength         = 256
	// MaxExtraDataLength bounds --extra-data: it travels in the test's
	// parameters to the server (iperf3's hold at most 8 KiB whole) and
	// is stored with every run.
	MaxExtraDataLength = 4096
	MaxCongestionName  = 16 // TCP_CA_NAME_MAX
)

// Spec describes one test. Durations travel as nanoseconds.
type Spec struct {
	Protocol string        `json:"protocol"`
	Streams  int           `json:"streams"`
	Duration time.Duration `json:"duration_ns"`     // 0 with Bytes > 0: stop on bytes only
	Bytes    int64         `json:"bytes,omitempty"` // per direction, across all streams
	Interval time.Duration `json:"interval_ns"`     // 0: no interval reports
	// Omit is the start left out of the totals. As in iperf3 it comes
	// before the measured time: Duration is the whole run, Omit
	// included (-t 2 -O 1 is a Duration of 3 s).
	Omit       time.Duration `json:"omit_ns,omitempty"`
	Reverse    bool          `json:"reverse,omitempty"`
	Bidir      bool          `json:"bidir,omitempty"`
	Window     int64         `json:"window,omitempty"` // SO_SNDBUF and SO_RCVBUF on both ends; 0 = autotuning
	Length     int           `json:"length"`           // bytes per write and per read
	MSS        int           `json:"mss,omitempty"`
	NoDelay    bool          `json:"nodelay,omitempty"`
	Congestion string        `json:"congestion,omitempty"`
	TOS        int           `json:"tos,omitempty"`
	Title      string        `json:"title,omitempty"`
	ZeroCopy   bool          `json:"zerocopy,omitempty"` // TCP senders use sendfile (-Z)
	// TCPInfoInterval is how often each sending TCP stream, on either
	// end, samples TCP_INFO for its timeline: 0 is the default
	// (DefaultTCPInfoInterval), a negative value turns the timeline off.
	TCPInfoInterval time.Duration `json:"tcpinfo_interval_ns,omitempty"`

	// UDP pacing: at most one of Rate, PPS and Spacing is set. Rate 0 with
	// none of the others sends as fast as possible.
	Rate    float64       `json:"rate_bps,omitempty"` // bits per second of UDP payload
	Burst   int           `json:"burst,omitempty"`    // datagrams per burst with Rate (-b RATE/BURST)
	PPS     int64         `json:"pps,omitempty"`
	Spacing time.Duration `json:"spacing_ns,omitempty"` // fixed gap between datagrams (UDPmon)
	// Spin busy-waits the end of each --spacing gap: exact gaps for a core.
	Spin          bool          `json:"spin,omitempty"`
	NoGSO         bool          `json:"no_gso,omitempty"`
	LateThreshold time.Duration `json:"late_threshold_ns,omitempty"` // 0: DefaultLateThresh

	// Request-response tests (Protocol RR, spec/rr.go). Duration and
	// RRCount are per size point.
	RRMode     string        `json:"rr_mode,omitempty"`        // RRUDP, RRTCP or RRCRR
	RRSizes    string        `json:"rr_sizes,omitempty"`       // request sizes in bytes, in order: "64,512" (RRSizeList)
	RRResponse int           `json:"rr_response,omitempty"`    // response size; 0: as the request
	RRCount    int64         `json:"rr_count,omitempty"`       // transactions per size; 0: by Duration
	RRInterval time.Duration `json:"rr_interval_ns,omitempty"` // 0: back to back; else isochronous
	RRBusyPoll bool          `json:"rr_busy_poll,omitempty"`   // both ends spin instead of blocking

	// HostCounters asks each end for its per-CPU time split and busiest
	// interrupt lines over the test (result.End.HostCounters).
	HostCounters bool `json:"host_counters,omitempty"`
	// UDPHistograms asks UDP receivers for histograms of inter-arrival
	// time and relative one-way delay (result.End.UDPArrivals).
	UDPHistograms bool `json:"udp_histograms,omitempty"`

	// Blocks is -k: the test ends after this many blocks of Length per
	// direction, across streams. Bytes then holds Blocks*Length, so a
	// peer that knows only -n runs the same test.
	Blocks int64 `json:"blocks,omitempty"`
	// FQRate is --fq-rate: each sender's socket pacing rate in bits per
	// second (SO_MAX_PACING_RATE), as iperf3's; 0 leaves it unset.
	FQRate float64 `json:"fq_rate_bps,omitempty"`
	// DontFragment is --dont-fragment: UDP datagrams go with DF set and
	// are never fragmented (IP_PMTUDISC_DO, IPV6_DONTFRAG).
	DontFragment bool `json:"dont_fragment,omitempty"`
	// FlowLabel is -L: the IPv6 flow label of the client's data
	// sockets (1 to 0xfffff); the server's sockets keep theirs.
	FlowLabel int `json:"flow_label,omitempty"`
	// SndTimeout is --snd-timeout: how long the client's TCP data sockets
	// keep unacknowledged data before the kernel gives the connection up
	// (TCP_USER_TIMEOUT), as iperf3's; 0 leaves the kernel's. The server's
	// sockets keep theirs.
	SndTimeout time.Duration `json:"snd_timeout_ns,omitempty"`
	// MPTCP is -m: the TCP data connections are Multipath TCP's (RFC
	// 8684), as iperf3's -m; the control connection stays TCP, as
	// iperf3's does. A peer or a path that refuses MPTCP leaves a
	// connection on TCP, and its report says so.
	MPTCP bool `json:"mptcp,omitempty"`
	// TripTimes is --trip-times, iperf2's: TCP senders stamp each block
	// (each write of Length bytes) with its send time, and receivers
	// report each block's write-to-read latency (result.TripTimes).
	TripTimes bool `json:"trip_times,omitempty"`
	// StreamTOS gives each TCP stream a TOS byte of its own (IP_TOS, or
	// IPV6_TCLASS) in place of TOS: stream i of each direction (i, and
	// P+i with --bidir) carries StreamTOS[i-1] on both ends' sockets.
	// No flag sets it; rrul does, a DSCP class per stream as flent's. A
	// server that applies it says so in its acceptance, and the client
	// refuses a server that does not (docs/protocol.md).
	StreamTOS []int `json:"stream_tos,omitempty"`
	// ExtraData is iperf3's --extra-data: a string of the user's that
	// both ends' JSON documents carry at their top level, as
	// "extra_data"; nothing else reads it.
	ExtraData string `json:"extra_data,omitempty"`
	// RepeatingPayload is iperf3's --repeating-payload: senders fill
	// their blocks (a UDP datagram's body, after its header) with
	// RepeatingPattern instead of their usual bytes, so that a path
	// that compresses shows what it does with compressible data.
	RepeatingPayload bool `json:"repeating_payload,omitempty"`
	// SkipRxCopy is iperf3's --skip-rx-copy: TCP receivers read with
	// MSG_TRUNC, the kernel discarding the data without copying it to
	// user space (Linux; elsewhere the reads copy, as iperf3's do).
	SkipRxCopy bool `json:"skip_rx_copy,omitempty"`
	// Isochronous is --isochronous with --ipg, iperf 2's frames: a UDP
	// test's senders send frames on their schedule instead of a rate, and
	// receivers account for each frame (result.Frames). Only a server
	// that speaks protocol version 2 runs it (docs/protocol.md).
	Isochronous *isoch.Frames `json:"isochronous,omitempty"`
}

// MaxFlowLabel is the largest IPv6 flow label (20 bits).
const MaxFlowLabel = 0xfffff

// Default returns the spec of a plain `wireperf -c HOST`.
func Default() Spec {
	return Spec{
		Protocol: TCP,
		Streams:  1,
		Duration: DefaultDuration,
		Interval: DefaultInterval,
		Length:   DefaultTCPLength,
	}
}

// Measured is the time the totals cover, -t: the run less its omitted
// start; 0 for a test that ends on bytes only.
func (s Spec) Measured() time.Duration { return max(s.Duration-s.Omit, 0) }

// TimelinePeriod is the TCP_INFO sampling period of a sending stream;
// 0 means no timeline.
func (s Spec) TimelinePeriod() time.Duration {
	switch {
	case s.TCPInfoInterval < 0:
		return 0
	case s.TCPInfoInterval == 0:
		return DefaultTCPInfoInterval
	}
	return s.TCPInfoInterval
}

// ClientSends reports whether the client sends data (forward or bidir).
func (s Spec) ClientSends() bool { return !s.Reverse || s.Bidir }

// ServerSends reports whether the server sends data (reverse or bidir).
func (s Spec) ServerSends() bool { return s.Reverse || s.Bidir }

// DataConns is the number of data connections the test opens.
func (s Spec) DataConns() int {
	if s.Bidir {
		return 2 * s.Streams
	}
	return s.Streams
}

// BufferBytes is the data buffers a test holds on the server: a block of
// -l for each data connection. A server's memory limits count it.
func (s Spec) BufferBytes() int64 { return int64(s.DataConns()) * int64(s.Length) }

// Validate checks a spec from the command line or from the network. The
// error names the field in flag terms, so it can be shown to a user as is.
func (s Spec) Validate() error {
	if s.StreamTOS != nil && s.Protocol != TCP {
		return errors.New("a TOS per stream applies to TCP tests")
	}
	switch s.Protocol {
	case TCP:
	case RR:
		return s.validateRR()
	case UDP:
		if err := s.validateUDP(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("protocol %q: want tcp or udp", s.Protocol)
	}
	if s.Streams < 1 || s.Streams > MaxStreams {
		return fmt.Errorf("-P %d: want 1 to %d streams", s.Streams, MaxStreams)
	}
	if s.Duration < 0 {
		return fmt.Errorf("-t %v: must not be negative", s.Duration)
	}
	if s.Bytes < 0 {
		return fmt.Errorf("-n %d: must not be negative", s.Bytes)
	}
	if s.Duration == 0 && s.Bytes == 0 {
		return errors.New("-t 0 needs -n BYTES: the test would never end")
	}
	if s.Interval != 0 && s.Interval < MinInterval {
		return fmt.Errorf("-i %v: want 0 (off) or at least %v", s.Interval, MinInterval)
	}
	if s.Omit < 0 {
		return fmt.Errorf("-O %v: must not be negative", s.Omit)
	}
	if s.TCPInfoInterval > 0 && s.TCPInfoInterval < MinTCPInfoInterval {
		return fmt.Errorf("--tcpinfo-interval %v: want 0 (off) or at least %v", s.TCPInfoInterval, MinTCPInfoInterval)
	}
	if s.Duration > 0 && s.Omit >= s.Duration {
		return fmt.Errorf("-O %v: must be shorter than the test (-t %v)", s.Omit, s.Duration)
	}
	if s.Reverse && s.Bidir {
		return errors.New("-R and --bidir: choose one")
	}
	if s.Window < 0 || s.Window > 1<<31-1 {
		return fmt.Errorf("-w %d: want 0 to 2 GiB", s.Window)
	}
	if s.Length < 1 || s.Length > MaxLength {
		return fmt.Errorf("-l %d: want 1 byte to %d bytes", s.Length, MaxLength)
	}
	if s.MSS != 0 && (s.MSS < 88 || s.MSS > 65535) {
		return fmt.Errorf("-M %d: want 88 to 65535 bytes", s.MSS)
	}
	if len(s.Congestion) > MaxCongestionName {
		return fmt.Errorf("-C %q: name too long", s.Congestion)
	}
	for _, r := range s.Congestion {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("-C %q: not a congestion control name", s.Congestion)
		}
	}
	if s.TOS < 0 || s.TOS > 255 {
		return fmt.Errorf("--tos %d: want 0 to 255", s.TOS)
	}
	if err := s.validateStreamTOS(); err != nil {
		return err
	}
	if len(s.Title) > MaxTitleLength {
		return fmt.Errorf("-T: title longer than %d bytes", MaxTitleLength)
	}
	if !InertText(s.Title) {
		// A title prefixes every line of both ends' reports: a \r, \n or
		// escape sequence in it could forge another line, or another
		// test's prefix in a server's report.
		return fmt.Errorf("-T %s: a title may not hold control characters (\\r, \\n, ESC…) or bytes that are not UTF-8", strconv.Quote(s.Title))
	}
	return s.validateIperf3Habits()
}

// MaxSndTimeout bounds --snd-timeout as iperf3 does (a day).
const MaxSndTimeout = 24 * time.Hour

// validateIperf3Habits checks the flags iperf3's users bring (-k,
// --fq-rate, --dont-fragment, -L, --snd-timeout).
func (s Spec) validateIperf3Habits() error {
	if s.Blocks < 0 {
		return fmt.Errorf("-k %d: must not be negative", s.Blocks)
	}
	if s.Blocks > 0 && s.Bytes != s.Blocks*int64(s.Length) {
		return fmt.Errorf("-k %d: the byte count must be %d blocks of -l %d", s.Blocks, s.Blocks, s.Length)
	}
	if s.FQRate < 0 {
		return fmt.Errorf("--fq-rate %v: must not be negative", s.FQRate)
	}
	if s.DontFragment && s.Protocol != UDP {
		return errors.New("--dont-fragment applies to UDP tests (-u)")
	}
	if s.SndTimeout < 0 || s.SndTimeout > MaxSndTimeout {
		return fmt.Errorf("--snd-timeout %d: want 0 to %d ms", s.SndTimeout.Milliseconds(), MaxSndTimeout.Milliseconds())
	}
	if s.SndTimeout > 0 && s.Protocol != TCP {
		return errors.New("--snd-timeout applies to TCP tests")
	}
	if s.Isochronous != nil && s.Protocol != UDP {
		return errors.New("--isochronous applies to UDP tests (-u)")
	}
	if s.MPTCP && s.Protocol != TCP {
		return errors.New("-m: MPTCP applies to TCP tests")
	}
	if err := s.validateTripTimes(); err != nil {
		return err
	}
	if err := s.validatePayload(); err != nil {
		return err
	}
	if s.FlowLabel < 0 || s.FlowLabel > MaxFlowLabel {
		return fmt.Errorf("-L %d: want a flow label from 1 to %d (0xfffff)", s.FlowLabel, MaxFlowLabel)
	}
	return nil
}

func (s Spec) validateUDP() error {
	if s.Length < 16 || s.Length > MaxUDPLength {
		return fmt.Errorf("-l %d: a UDP payload must be 16 to %d bytes", s.Length, MaxUDPLength)
	}
	set := 0
	for _, on := range []bool{s.Rate > 0, s.PPS > 0, s.Spacing > 0} {
		if on {
			set++
		}
	}
	if set > 1 {
		return errors.New("-b, --pps and --spacing: choose one")
	}
	if s.Rate < 0 || s.PPS < 0 || s.Spacing < 0 || s.Burst < 0 {
		return errors.New("-b, --pps, --spacing and the burst must not be negative")
	}
	if s.Burst > 0 && s.Rate == 0 {
		return errors.New("-b RATE/BURST: a burst needs a rate")
	}
	if s.Spin && s.Spacing == 0 {
		return errors.New("--spin holds --spacing's gaps; it needs --spacing")
	}
	if s.LateThreshold < 0 {
		return errors.New("--late-threshold must not be negative")
	}
	return s.validateIsochronous()
}

// MinIsochronousLength is the shortest datagram of an isochronous test:
// the header with its frame fields (udpflow.FrameHeaderLen is this).
const MinIsochronousLength = 64

func (s Spec) validateIsochronous() error {
	f := s.Isochronous
	switch {
	case f == nil:
		return nil
	case s.Rate > 0 || s.PPS > 0 || s.Spacing > 0:
		return errors.New("--isochronous and -b, --pps or --spacing: choose one (the frames set the rate)")
	case s.Length < MinIsochronousLength:
		return fmt.Errorf("-l %d: an isochronous datagram carries its frame's fields; give -l %d or more", s.Length, MinIsochronousLength)
	}
	if err := f.Check(); err != nil {
		return fmt.Errorf("--isochronous: %w", err)
	}
	return nil
}

// EffectiveLateThreshold is the time after which a missing datagram counts
// as lost (docs/metrics.md, "Loss").
func (s Spec) EffectiveLateThreshold() time.Duration {
	if s.LateThreshold > 0 {
		return s.LateThreshold
	}
	return DefaultLateThresh
}

// ClientSendsOn reports whether the client is the sender on stream id.
// Streams 1..P carry the test's main direction; with --bidir, streams
// P+1..2P carry the server's (iperf3 opens them in the same order).
func (s Spec) ClientSendsOn(id int) bool {
	if s.Bidir {
		return id <= s.Streams
	}
	return !s.Reverse
}

// InertText says whether text prints as itself in a terminal and a log
// line: valid UTF-8 without control characters (C0, DEL, C1), tab
// aside.
func InertText(text string) bool {
	return utf8.ValidString(text) && strings.IndexFunc(text, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) < 0
}

// validateStreamTOS checks a TOS per stream: one valid TOS byte for
// each of the P streams of a TCP test, and no --tos beside them.
func (s Spec) validateStreamTOS() error {
	switch {
	case s.StreamTOS == nil:
		return nil
	case len(s.StreamTOS) != s.Streams:
		return fmt.Errorf("a TOS per stream: %d given for -P %d streams", len(s.StreamTOS), s.Streams)
	case s.TOS != 0:
		return errors.New("--tos and a TOS per stream: choose one")
	}
	for i, tos := range s.StreamTOS {
		if tos < 0 || tos > 255 {
			return fmt.Errorf("the TOS of stream %d: %d, want 0 to 255", i+1, tos)
		}
	}
	return nil
}

// TOSOn is the TOS byte of data stream id (1 to DataConns()): its own
// where the spec gives one per stream, else TOS.
func (s Spec) TOSOn(id int) int {
	if len(s.StreamTOS) == 0 || s.Streams < 1 || id < 1 {
		return s.TOS
	}
	return s.StreamTOS[(id-1)%s.Streams%len(s.StreamTOS)]
}

// MinTripTimesLength is the shortest block --trip-times stamps: the
// length of the header it stamps (tcpflow.TripHeaderLen is this).
const MinTripTimesLength = 16

func (s Spec) validateTripTimes() error {
	switch {
	case !s.TripTimes:
		return nil
	case s.Protocol != TCP:
		return errors.New("--trip-times applies to TCP tests (UDP datagrams carry their send times already)")
	case s.ZeroCopy:
		return errors.New("--trip-times and -Z: choose one (-Z sends from a file the sender cannot stamp)")
	case s.Length < MinTripTimesLength:
		return fmt.Errorf("-l %d: --trip-times stamps each block with a %d-byte header; give -l %d or more", s.Length, MinTripTimesLength, MinTripTimesLength)
	}
	return nil
}
