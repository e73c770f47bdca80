// Package testflags declares each test command's flags once: its name,
// shorthand, kind of value and help, whether a scheduled test line may
// carry it (and why not), and whether it is a flag of `wireperf group`
// (and a key of its files) and an axis a campaign sweeps. The commands
// register their flags from these declarations (Register), testline
// checks lines, group registers its test flags and campaign names its
// axes from them: a command has exactly the flags declared here.
package testflags

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/ping/pingplan"
	"github.com/wireperf/wireperf/internal/strftime"
	"github.com/wireperf/wireperf/internal/tcpconnect/connectplan"
	"github.com/wireperf/wireperf/internal/trace/traceplan"
)

// Kind is the kind of a flag's value, and so which characters it may
// hold in a test line.
type Kind int

// The kinds of value.
const (
	Bool     Kind = iota // no value, or =true/=false
	Duration             // 10, 2.5, 90s, 500ms
	Size                 // 16M, 1472, 8K
	Rate                 // 750m, 10G/32
	Int                  // 4
	Word                 // cubic, EF, 0x10, a hex pin
	List                 // 64,512,1472 or 0:40us:1us or tcp,4,down,300m
	Text                 // a title: printable, no blanks (lines are split at blanks)
	Addr                 // an IP address of this host (--bind)
	Port                 // a local port above the privileged range (--cport)
)

// Flag is one flag of a test command. A test line comes from a mesh
// file, the API or another host's rows in a shared archive, so it is
// data: it may carry the flags that shape the measurement, and the
// output, the archive, files, keys and the destination belong to the
// daemon that runs the test (Refused says why for each such flag).
type Flag struct {
	Name  string // the long name
	Short string // its shorthand, "" when none
	Kind  Kind
	// Help is the flag's line in --help and the man page. Its default
	// there is the value of the variable it is bound to (Register).
	Help string
	// NoOpt is the value a flag that takes one gets when given alone
	// (pflag's NoOptDefVal); "" when it needs its value.
	NoOpt string
	// Refused says why a test line may not carry the flag; "" when it
	// may.
	Refused string
	// CLI says the command line binds it (package cli: files, logs, the
	// archive, keys, the progress bar); package measure binds the others,
	// which are all a test line's flags (measure.Parse).
	CLI bool
	// Shared says its help is that of the one helper that registers it on
	// every command that has it (--db, the key and TLS flags): Help is
	// empty and Register adopts the helper's flag.
	Shared bool
	// Group says `wireperf group` takes it, under the same name as a flag
	// and as a key of a group file, for every pair or pair by pair.
	Group bool
	// Axis says a campaign (`wireperf sweep`) may sweep it, as an axis of
	// the same name (or its shorthand).
	Axis bool
}

// Why the flags a test line may not carry are refused.
const (
	output         = "the daemon sets the output itself"
	namesFile      = "names a file: a test line may not"
	taskPort       = "the port comes from the task's destination address"
	pinsProcess    = "pins the whole process that runs it, the daemon's other tests with it"
	bindsInterface = "binds to an interface: the host's configuration chooses it"
	keepAlive      = "the daemon keeps its control connections alive itself"
	keyFile        = "names a key file: the daemon's configuration gives keys"
	trustFile      = "names a file: the daemon's configuration gives trust"
	stores         = "the daemon stores every run itself"
	archive        = "names an archive: the daemon stores every run in its own"
	// iperf3's authentication carries a password.
	iperf3Credentials = "iperf3's credentials: a password has no place in a test line"
	// A multicast sender has no server to schedule it against.
	multicastSender = "a multicast sender's: the daemon schedules tests between a client and its server"
)

// Client is the client command's (wireperf -c) flags.
var Client = []Flag{
	{Name: "time", Short: "t", Kind: Duration, Group: true, Axis: true,
		Help: "test length: seconds, or a duration such as 90s or 30m (0 with -n: until the bytes are sent)"},
	{Name: "bytes", Short: "n", Kind: Size,
		Help: "stop after this many bytes per direction, across streams (e.g. 1G)"},
	{Name: "interval", Short: "i", Kind: Duration, Group: true,
		Help: "seconds between interval reports, fractions allowed; 0 turns them off"},
	{Name: "omit", Short: "O", Kind: Duration, Group: true,
		Help: "run this long first, left out of the totals (slow start); -t is measured after it"},
	{Name: "parallel", Short: "P", Kind: Int, Group: true, Axis: true,
		Help: "parallel streams"},
	{Name: "udp", Short: "u", Kind: Bool, Group: true,
		Help: "UDP instead of TCP"},
	{Name: "bitrate", Short: "b", Kind: Rate, Group: true, Axis: true,
		Help: "rate per stream in bit/s, k m g t powers of 1000 in either case as iperf3 (1G = 10^9): UDP RATE or RATE/BURST (e.g. 750m, 10G/32; 0 = as fast as possible; default 1m); TCP paces with the kernel"},
	{Name: "pps", Kind: Int,
		Help: "UDP: datagrams per second per stream, instead of -b"},
	{Name: "spacing", Kind: Duration, Axis: true,
		Help: "UDP: a fixed gap between datagrams, e.g. 12us (UDPmon's method), instead of -b"},
	{Name: "spin", Kind: Bool,
		Help: "UDP with --spacing: busy-wait the last microseconds of each gap for exact gaps, at the cost of a core (reported)"},
	{Name: "no-gso", Kind: Bool,
		Help: "UDP: no segmentation offload (GSO) on send nor GRO on receive"},
	{Name: "late-threshold", Kind: Duration,
		Help: "UDP: a missing datagram counts as lost after this long (2s)"},
	{Name: "reverse", Short: "R", Kind: Bool, Group: true,
		Help: "the server sends, the client receives"},
	{Name: "bidir", Kind: Bool, Group: true,
		Help: "both ends send at once"},
	{Name: "window", Short: "w", Kind: Size, Group: true, Axis: true,
		Help: "socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends, e.g. 16M; turns off autotuning"},
	{Name: "length", Short: "l", Kind: Size, Group: true, Axis: true,
		Help: "bytes per write and per read"},
	{Name: "set-mss", Short: "M", Kind: Int, Axis: true,
		Help: "TCP maximum segment size (TCP_MAXSEG)"},
	{Name: "zerocopy", Short: "Z", Kind: Bool,
		Help: "TCP senders hand data to the kernel with sendfile, without a user-space copy"},
	{Name: "repeating-payload", Kind: Bool,
		Help: "senders send iperf3's repeating pattern (0123456789…) instead of their usual bytes: to see what a compressing path does"},
	{Name: "skip-rx-copy", Kind: Bool,
		Help: "TCP receivers read with MSG_TRUNC: the kernel discards the data without copying it to user space (Linux)"},
	{Name: "no-delay", Short: "N", Kind: Bool,
		Help: "turn off Nagle's algorithm (TCP_NODELAY)"},
	{Name: "congestion", Short: "C", Kind: Word, Axis: true,
		Help: "congestion control algorithm on both ends (e.g. cubic, bbr, reno)"},
	{Name: "tos", Short: "S", Kind: Word,
		Help: "IP type-of-service byte (decimal, 0x hex or 0 octal)"},
	{Name: "dscp", Kind: Word,
		Help: "DSCP code point, a number or a name such as EF or AF41"},
	{Name: "bind", Short: "B", Kind: Addr,
		Help: "local address for the client's connections"},
	{Name: "cport", Kind: Port,
		Help: "local port of the first data connection (the next streams take the next ports)"},
	{Name: "version4", Short: "4", Kind: Bool,
		Help: "only IPv4: resolve the server and connect over IPv4"},
	{Name: "version6", Short: "6", Kind: Bool,
		Help: "only IPv6: resolve the server and connect over IPv6"},
	{Name: "blockcount", Short: "k", Kind: Size,
		Help: "stop after this many blocks (of -l) per direction, across streams; instead of -t or -n"},
	{Name: "fq-rate", Kind: Rate,
		Help: "each sender's socket pacing rate in bits/s (SO_MAX_PACING_RATE, fair queueing); UDP needs the fq qdisc"},
	{Name: "dont-fragment", Kind: Bool,
		Help: "UDP: never fragment a datagram (IPv4's Don't Fragment bit, IPV6_DONTFRAG; Linux); too large a datagram fails"},
	{Name: "flowlabel", Short: "L", Kind: Word,
		Help: "IPv6 flow label `N` of the client's TCP data packets, 1 to 0xfffff (Linux)"},
	{Name: "rcv-timeout", Kind: Int,
		Help: "when the client receives (-R, --bidir): end the test with an error after `MS` milliseconds with no data"},
	{Name: "snd-timeout", Kind: Int,
		Help: "TCP: the client's data connections end when data stays unacknowledged for `MS` milliseconds (TCP_USER_TIMEOUT, Linux; default: the kernel's)"},
	{Name: "mptcp", Short: "m", Kind: Bool,
		Help: "TCP: the data connections use MPTCP (Linux); a peer or path that refuses it leaves them on TCP, and the report says so"},
	{Name: "trip-times", Kind: Bool,
		Help: "TCP: stamp each block (-l) with its send time; receivers report write-to-read latency (iperf2's; needs synchronised clocks, wireperf servers only)"},
	{Name: "ttl", Kind: Int, Refused: multicastSender,
		Help: "multicast group: the datagrams' TTL (IPv6 hop limit), 1 to 255 (default 1, as iperf 2); -T N before a group means the same"},
	{Name: "isochronous", Kind: List, NoOpt: "60:20m,0",
		Help: "UDP: frames (video-like bursts) as iperf 2's, `FPS:MEAN,STDEV` frames a second of a log-normal size whose mean and deviation are bits a second (=60:20m,0 when given alone); a multicast group's, or a wireperf server's, whose receivers report each frame"},
	{Name: "ipg", Kind: Duration,
		Help: "with --isochronous: milliseconds between the datagrams of a frame (0: back to back)"},
	{Name: "title", Short: "T", Kind: Text,
		Help: "prefix every output line with this title"},
	{Name: "format", Short: "f", Kind: Word,
		Help: "units: a adaptive, b k m g t bits, B K M G T bytes"},
	{Name: "iperf3", Kind: Bool,
		Help: "speak iperf3's protocol (found on its own when the server is iperf3)"},
	{Name: "retry-busy", Kind: Duration,
		Help: "iperf3 servers: retry a busy server with backoff for up to this long"},
	{Name: "udp-counters-64bit", Kind: Bool,
		Help: "iperf3 servers: 64-bit UDP sequence numbers"},
	{Name: "tcpinfo-interval", Kind: Duration,
		Help: "TCP_INFO timeline period per sending stream; 0 turns the timeline off"},
	{Name: "bottleneck", Kind: Rate,
		Help: "the path's bottleneck rate in bit/s (e.g. 1g; 1G is also 10^9), for the RFC 6349 Transfer Time Ratio"},
	{Name: "connect-timeout", Kind: Duration,
		Help: "give up connecting after this long (seconds, or e.g. 500ms)"},
	{Name: "tls-pin", Kind: Word, CLI: true, Shared: true},
	{Name: "affinity", Short: "A", Kind: Word, Refused: pinsProcess,
		Help: "`n[,m]`: pin the client to CPU n for the test, and an iperf3 server (--iperf3) to CPU m (Linux)"},
	{Name: "auth-key-file", Kind: Word, Refused: keyFile, CLI: true, Shared: true},
	{Name: "username", Kind: Word, Refused: iperf3Credentials, CLI: true, Shared: true},
	{Name: "rsa-public-key-path", Kind: Word, Refused: iperf3Credentials, CLI: true, Shared: true},
	{Name: "use-pkcs1-padding", Kind: Bool, Refused: iperf3Credentials, CLI: true, Shared: true},
	{Name: "cntl-ka", Kind: Word, Refused: keepAlive, NoOpt: "/",
		Help: "TCP keepalive on the control connection; =IDLE/INTV/CNT sets the idle seconds, seconds between probes and probes, each optional"},
	{Name: "db", Kind: Word, Refused: archive, CLI: true, Shared: true},
	{Name: "enhanced", Short: "e", Kind: Bool, Refused: output,
		Help: "iperf2's enhanced text: Write/Err, Rtry, Cwnd/RTT(var) and NetPwr columns"},
	{Name: "file", Short: "F", Kind: Word, Refused: namesFile,
		Help: "the client's sender sends the bytes of `FILE`; a receiving client (-R) writes what it receives to it (one TCP stream)"},
	{Name: "forceflush", Kind: Bool, Refused: output,
		Help: "flush the output after every line (when it goes to a pipe)"},
	{Name: "get-server-output", Kind: Bool, Refused: output,
		Help: "show the server's own report of the test after the client's (iperf3's --get-server-output)"},
	{Name: "json", Short: "J", Kind: Bool, Refused: output,
		Help: "one JSON document in iperf3's layout"},
	{Name: "json-stream", Kind: Bool, Refused: output,
		Help: "one JSON object per line as the test runs"},
	{Name: "json-stream-full-output", Kind: Bool, Refused: output,
		Help: "with --json-stream: after the stream's lines, -J's whole document"},
	{Name: "extra-data", Kind: Text,
		Help: "a string both ends' JSON documents carry as \"extra_data\" (at most 4096 bytes)"},
	{Name: "log-format", Kind: Word, Refused: output, CLI: true,
		Help: "diagnostic log format: text or json"},
	{Name: "log-level", Kind: Word, Refused: output, CLI: true,
		Help: "diagnostic log level on stderr: debug, info, warn, error"},
	{Name: "logfile", Kind: Word, Refused: namesFile, CLI: true,
		Help: "write the report to this file instead of stdout (appends)"},
	{Name: "port", Short: "p", Kind: Int, Refused: taskPort,
		Help: "server port"},
	{Name: "reportstyle", Short: "y", Kind: Word, Refused: output,
		Help: "C: iperf2's CSV lines (-y C) instead of text"},
	{Name: "save", Kind: Bool, Refused: stores, CLI: true,
		Help: "store the run in the archive (see --db), as a campaign's runs are"},
	{Name: "tcpinfo-csv", Kind: Word, Refused: namesFile, CLI: true,
		Help: "write the TCP_INFO timelines to this CSV file"},
	{Name: "timestamps", Kind: Word, Refused: output, NoOpt: strftime.IperfDefault,
		Help: "start every text line with the time, in this strftime format (%c %Y %m %d %H %M %S %s %T %F %z %%; default \"%c \")"},
	{Name: "tls-ca", Kind: Word, Refused: trustFile, CLI: true, Shared: true},
	{Name: "verbose", Short: "V", Kind: Bool, Refused: output,
		Help: "more detail: the version, the system, the test's parameters, CPU use"},
	{Name: "xbind", Short: "X", Kind: Word, Refused: bindsInterface,
		Help: "bind the control and data sockets to network interface `DEV` (SO_BINDTODEVICE, Linux)"},
}

// RR is the rr command's.
var RR = []Flag{
	{Name: "udp", Kind: Bool,
		Help: "one UDP datagram each way per transaction (the default)"},
	{Name: "tcp", Kind: Bool,
		Help: "requests and responses on one TCP connection"},
	{Name: "crr", Kind: Bool,
		Help: "a new TCP connection for every transaction (connect, request, response, close)"},
	{Name: "sizes", Kind: List,
		Help: "request sizes in bytes: a list (64,512,1472) or START:END:STEP (64:1472:64), each a point of the sweep"},
	{Name: "response-size", Kind: Size,
		Help: "response size in bytes, e.g. 1472 or 8K (default: the request's size)"},
	{Name: "time", Short: "t", Kind: Duration,
		Help: "how long each size runs (0 with --count: by count only)"},
	{Name: "count", Kind: Int,
		Help: "transactions per size (with -t too, whichever ends first)"},
	{Name: "interval", Kind: Duration,
		Help: "gap between requests: 0 sends each as the last response arrives; else an isochronous schedule (e.g. 10ms)"},
	{Name: "busy-poll", Kind: Bool,
		Help: "spin on the socket instead of blocking, on both ends (lowest latency; costs a core each; sets SO_BUSY_POLL where permitted)"},
	{Name: "timeout", Kind: Duration,
		Help: "UDP: a response later than this counts as lost (default adapts: at least 200ms, 4 × the largest RTT)"},
	{Name: "host-counters", Kind: Bool,
		Help: "report each host's per-CPU time split and busiest interrupt lines over the test"},
	{Name: "window", Short: "w", Kind: Size,
		Help: "socket buffers (SO_SNDBUF and SO_RCVBUF) on both ends"},
	{Name: "tos", Kind: Word,
		Help: "IP type-of-service byte"},
	{Name: "dscp", Kind: Word,
		Help: "DSCP code point, a number or a name such as EF"},
	{Name: "bind", Short: "B", Kind: Addr,
		Help: "local address for the client's sockets"},
	{Name: "title", Short: "T", Kind: Text,
		Help: "prefix every output line with this title"},
	{Name: "load", Kind: List,
		Help: "latency under load: PROTO,STREAMS[,up|down|both][,RATE], e.g. tcp,4 or udp,2,down,300m — probes before, during and after a bulk test"},
	{Name: "load-time", Kind: Duration,
		Help: "how long the load runs"},
	{Name: "load-idle", Kind: Duration,
		Help: "probes alone before the load"},
	{Name: "load-after", Kind: Duration,
		Help: "probes alone after the load"},
	{Name: "connect-timeout", Kind: Duration,
		Help: "give up connecting after this long"},
	{Name: "tls-pin", Kind: Word, CLI: true, Shared: true},
	{Name: "auth-key-file", Kind: Word, Refused: keyFile, CLI: true, Shared: true},
	{Name: "json", Short: "J", Kind: Bool, Refused: output,
		Help: "one JSON document: both ends' figures and the full histograms"},
	{Name: "log-format", Kind: Word, Refused: output, CLI: true,
		Help: "diagnostic log format: text or json"},
	{Name: "log-level", Kind: Word, Refused: output, CLI: true,
		Help: "diagnostic log level on stderr: debug, info, warn, error"},
	{Name: "logfile", Kind: Word, Refused: namesFile, CLI: true,
		Help: "write the report to this file instead of stdout (appends)"},
	{Name: "port", Short: "p", Kind: Int, Refused: taskPort,
		Help: "server port"},
	{Name: "tls-ca", Kind: Word, Refused: trustFile, CLI: true, Shared: true},
}

// UDPMon is the udpmon command's.
var UDPMon = []Flag{
	{Name: "sizes", Kind: List,
		Help: "UDP payload sizes in bytes: a list (512,1472) or START:END:STEP"},
	{Name: "spacing", Kind: List,
		Help: "gaps between datagrams: a list (0,12us) or START:END:STEP (0:40us:1us); a bare number is µs; 0 sends as fast as possible"},
	{Name: "count", Kind: Int,
		Help: "datagrams per point"},
	{Name: "reverse", Short: "R", Kind: Bool,
		Help: "the server sends, the client receives"},
	{Name: "window", Short: "w", Kind: Size,
		Help: "socket buffers on both ends (e.g. 4K to see the receiving host drop); default: the receiver asks for 8 MiB"},
	{Name: "no-gso", Kind: Bool,
		Help: "no segmentation offload on send nor GRO on receive"},
	{Name: "spin", Kind: Bool,
		Help: "busy-wait the last microseconds of each gap for exact gaps, at the cost of a core (points of spacing 0 do not wait)"},
	{Name: "tos", Kind: Word,
		Help: "IP type-of-service byte"},
	{Name: "late-threshold", Kind: Duration,
		Help: "a missing datagram counts as lost after this long (2s)"},
	{Name: "point-timeout", Kind: Duration,
		Help: "give up on a point after this long (default: twice its sending time plus 20s)"},
	{Name: "bind", Short: "B", Kind: Addr,
		Help: "local address for the client's sockets"},
	{Name: "connect-timeout", Kind: Duration,
		Help: "give up connecting after this long"},
	{Name: "no-progress", Kind: Bool, CLI: true,
		Help: "no progress bar, even on a terminal"},
	{Name: "title", Short: "T", Kind: Text,
		Help: "prefix every table line with this title"},
	{Name: "tls-pin", Kind: Word, CLI: true, Shared: true},
	{Name: "auth-key-file", Kind: Word, Refused: keyFile, CLI: true, Shared: true},
	{Name: "campaign", Kind: Word, Refused: stores, CLI: true,
		Help: "with --save: store the sweep with this campaign's runs (it must exist)"},
	{Name: "csv", Kind: Bool, Refused: output,
		Help: "CSV, one row per point"},
	{Name: "db", Kind: Word, Refused: archive, CLI: true, Shared: true},
	{Name: "json", Short: "J", Kind: Bool, Refused: output,
		Help: "one JSON document: every point with both hosts' counters and its histograms"},
	{Name: "log-format", Kind: Word, Refused: output, CLI: true,
		Help: "diagnostic log format: text or json"},
	{Name: "log-level", Kind: Word, Refused: output, CLI: true,
		Help: "diagnostic log level on stderr: debug, info, warn, error"},
	{Name: "logfile", Kind: Word, Refused: namesFile, CLI: true,
		Help: "write the report to this file instead of stdout (appends)"},
	{Name: "port", Short: "p", Kind: Int, Refused: taskPort,
		Help: "server port"},
	{Name: "save", Kind: Bool, Refused: stores, CLI: true,
		Help: "store the sweep (its -J document) in the archive (see --db) as one run"},
	{Name: "tls-ca", Kind: Word, Refused: trustFile, CLI: true, Shared: true},
}

// Trace is the trace command's. A trace's destination port is not the
// daemon's: the task's port is left out of its arguments.
var Trace = []Flag{
	{Name: "max-hops", Kind: Int,
		Help: fmt.Sprintf("the largest TTL probed (1 to %d)", traceplan.MaxHopsLimit)},
	{Name: "probes", Kind: Int,
		Help: fmt.Sprintf("probes per hop (1 to %d)", traceplan.MaxProbesLimit)},
	{Name: "proto", Kind: Word,
		Help: "what a probe is: udp (a datagram to an unlikely port) or icmp (an echo request)"},
	{Name: "probe-timeout", Kind: Duration,
		Help: "how long a hop's probes wait for their answers"},
	{Name: "max-time", Kind: Duration,
		Help: "stop the trace after this long (0: max hops × probe timeout)"},
	{Name: "raw", Kind: Bool,
		Help: "read the answers through a raw ICMP socket (root or CAP_NET_RAW); without it, from the probing socket's error queue, which needs no privilege"},
	{Name: "json", Short: "J", Kind: Bool, Refused: output,
		Help: "one JSON document: every hop with its address and each probe's RTT"},
}

// Ping is the ping command's. Like a trace, a ping measures a host
// whatever it runs: the task's port is left out of its arguments.
var Ping = []Flag{
	{Name: "count", Kind: Int,
		Help: fmt.Sprintf("echo requests to send (1 to %d)", pingplan.MaxCount)},
	{Name: "interval", Kind: Duration,
		Help: fmt.Sprintf("between two requests (at least %v)", pingplan.MinInterval)},
	{Name: "size", Kind: Int,
		Help: "bytes of data in each request, after the ICMP header"},
	{Name: "timeout", Kind: Duration,
		Help: "how long the last request waits for its reply"},
	{Name: "raw", Kind: Bool,
		Help: "a raw ICMP socket (root or CAP_NET_RAW) instead of a ping socket (net.ipv4.ping_group_range)"},
	{Name: "version4", Short: "4", Kind: Bool,
		Help: "only IPv4"},
	{Name: "version6", Short: "6", Kind: Bool,
		Help: "only IPv6"},
	{Name: "json", Short: "J", Kind: Bool, Refused: output,
		Help: "one JSON document: counts, RTT percentiles, TTL"},
}

// TCPConnect is the tcp-connect command's; the port it connects to is
// --tcp-port (the task's port is its server's).
var TCPConnect = []Flag{
	{Name: "count", Kind: Int,
		Help: fmt.Sprintf("connects to make (1 to %d)", connectplan.MaxCount)},
	{Name: "interval", Kind: Duration,
		Help: fmt.Sprintf("between the starts of two connects (at least %v)", connectplan.MinInterval)},
	{Name: "timeout", Kind: Duration,
		Help: "how long one connect may take before it counts as timed out"},
	{Name: "tcp-port", Kind: Int,
		Help: "the port to connect to, when HOST names none (a mesh test names its port so)"},
	{Name: "version4", Short: "4", Kind: Bool,
		Help: "only IPv4"},
	{Name: "version6", Short: "6", Kind: Bool,
		Help: "only IPv6"},
	{Name: "json", Short: "J", Kind: Bool, Refused: output,
		Help: "one JSON document: counts and handshake-time percentiles"},
}

// commands is every test command's declarations, by name.
var commands = map[string][]Flag{
	"client":      Client,
	"rr":          RR,
	"udpmon":      UDPMon,
	"trace":       Trace,
	"ping":        Ping,
	"tcp-connect": TCPConnect,
}

// Declared is every flag of a command, those a line may not carry with
// them; nil for a command a test line can't name.
func Declared(command string) []Flag { return commands[command] }

// Of is a command's flags that a line may carry; nil for a command a
// test line can't name.
func Of(command string) []Flag {
	var out []Flag
	for _, f := range commands[command] {
		if f.Refused == "" {
			out = append(out, f)
		}
	}
	return out
}

// Lookup is a command's flag that a line may carry, by long name.
func Lookup(command, name string) (Flag, bool) {
	for _, f := range commands[command] {
		if f.Name == name && f.Refused == "" {
			return f, true
		}
	}
	return Flag{}, false
}

// LookupShort is a command's flag that a line may carry, by shorthand.
func LookupShort(command, short string) (Flag, bool) {
	for _, f := range commands[command] {
		if f.Short != "" && f.Short == short && f.Refused == "" {
			return f, true
		}
	}
	return Flag{}, false
}

// Group is the client's flags that `wireperf group` takes, in their
// declared order.
func Group() []Flag { return filter(func(f Flag) bool { return f.Group }) }

// Axes is the client's flags a campaign may sweep, in their declared
// order.
func Axes() []Flag { return filter(func(f Flag) bool { return f.Axis }) }

func filter(keep func(Flag) bool) []Flag {
	var out []Flag
	for _, f := range Client {
		if keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// outside is why a line may not carry the flags that are no test
// command's own: cobra's, and the iperf-style root's -c and -s.
var outside = []Flag{
	{Name: "client", Short: "c", Refused: "the destination comes from the task"},
	{Name: "server", Short: "s", Refused: "a test line runs a test, not a server"},
	{Name: "help", Short: "h", Refused: "not a measurement flag"},
	{Name: "version", Short: "v", Refused: "not a measurement flag"},
}

// refused is the first declaration refused in a line that match says,
// over every command in a fixed order, then the flags outside them.
func refused(match func(Flag) bool) (Flag, bool) {
	for _, decls := range [][]Flag{Client, RR, UDPMon, Trace, Ping, TCPConnect, outside} {
		for _, f := range decls {
			if f.Refused != "" && match(f) {
				return f, true
			}
		}
	}
	return Flag{}, false
}

// Refused is why a flag is refused in every test line, by long name.
func Refused(name string) (string, bool) {
	f, ok := refused(func(f Flag) bool { return f.Name == name })
	return f.Refused, ok
}

// RefusedShort is the long name of a refused shorthand.
func RefusedShort(short string) (string, bool) {
	f, ok := refused(func(f Flag) bool { return f.Short != "" && f.Short == short })
	return f.Name, ok
}
