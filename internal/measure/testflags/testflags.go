// Package testflags declares each test command's flags once, with what
// the rest of the model derives from them: the kind of value a flag
// takes, whether a scheduled test line may carry it (and why not), and
// whether it is a flag of `wireperf group` (and a key of its files) and an
// axis a campaign sweeps. testline checks lines, group registers its test
// flags and campaign names its axes from these declarations. Package
// measure registers the commands' flags with their help and defaults; a
// cli test (TestTestLineFlagsMatchCommands) holds the two to each other,
// so a flag added to a command and not declared here fails it.
package testflags

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

// Flag is one flag of a command that a scheduled test line may carry: a
// flag that shapes the measurement. A test line comes from a mesh file,
// the API or another host's rows in a shared archive, so it is data; the
// output, the archive, files, keys and the destination belong to the
// daemon that runs the test (Refused says why for each such flag).
type Flag struct {
	Name  string // the long name
	Short string // its shorthand, "" when none
	Kind  Kind
	// Group says `wireperf group` takes it, under the same name as a flag
	// and as a key of a group file, for every pair or pair by pair.
	Group bool
	// Axis says a campaign (`wireperf sweep`) may sweep it, as an axis of
	// the same name (or its shorthand).
	Axis bool
}

// Client is the client command's (wireperf -c) flags a line may carry.
var Client = []Flag{
	{Name: "time", Short: "t", Kind: Duration, Group: true, Axis: true},
	{Name: "bytes", Short: "n", Kind: Size},
	{Name: "interval", Short: "i", Kind: Duration, Group: true},
	{Name: "omit", Short: "O", Kind: Duration, Group: true},
	{Name: "parallel", Short: "P", Kind: Int, Group: true, Axis: true},
	{Name: "udp", Short: "u", Kind: Bool, Group: true},
	{Name: "bitrate", Short: "b", Kind: Rate, Group: true, Axis: true},
	{Name: "pps", Short: "", Kind: Int},
	{Name: "spacing", Short: "", Kind: Duration, Axis: true},
	{Name: "spin", Short: "", Kind: Bool},
	{Name: "no-gso", Short: "", Kind: Bool},
	{Name: "late-threshold", Short: "", Kind: Duration},
	{Name: "reverse", Short: "R", Kind: Bool, Group: true},
	{Name: "bidir", Short: "", Kind: Bool, Group: true},
	{Name: "window", Short: "w", Kind: Size, Group: true, Axis: true},
	{Name: "length", Short: "l", Kind: Size, Group: true, Axis: true},
	{Name: "set-mss", Short: "M", Kind: Int, Axis: true},
	{Name: "zerocopy", Short: "Z", Kind: Bool},
	{Name: "no-delay", Short: "N", Kind: Bool},
	{Name: "congestion", Short: "C", Kind: Word, Axis: true},
	{Name: "tos", Short: "S", Kind: Word},
	{Name: "dscp", Short: "", Kind: Word},
	{Name: "bind", Short: "B", Kind: Addr},
	{Name: "cport", Short: "", Kind: Port},
	{Name: "version4", Short: "4", Kind: Bool},
	{Name: "version6", Short: "6", Kind: Bool},
	{Name: "blockcount", Short: "k", Kind: Size},
	{Name: "fq-rate", Short: "", Kind: Rate},
	{Name: "dont-fragment", Short: "", Kind: Bool},
	{Name: "flowlabel", Short: "L", Kind: Word},
	{Name: "rcv-timeout", Short: "", Kind: Int},
	{Name: "snd-timeout", Short: "", Kind: Int},
	{Name: "mptcp", Short: "m", Kind: Bool},
	{Name: "trip-times", Short: "", Kind: Bool},
	{Name: "title", Short: "T", Kind: Text},
	{Name: "format", Short: "f", Kind: Word},
	{Name: "iperf3", Short: "", Kind: Bool},
	{Name: "retry-busy", Short: "", Kind: Duration},
	{Name: "udp-counters-64bit", Short: "", Kind: Bool},
	{Name: "tcpinfo-interval", Short: "", Kind: Duration},
	{Name: "bottleneck", Short: "", Kind: Rate},
	{Name: "connect-timeout", Short: "", Kind: Duration},
	{Name: "tls-pin", Short: "", Kind: Word},
}

// RR is the rr command's.
var RR = []Flag{
	{Name: "udp", Short: "", Kind: Bool},
	{Name: "tcp", Short: "", Kind: Bool},
	{Name: "crr", Short: "", Kind: Bool},
	{Name: "sizes", Short: "", Kind: List},
	{Name: "response-size", Short: "", Kind: Size},
	{Name: "time", Short: "t", Kind: Duration},
	{Name: "count", Short: "", Kind: Int},
	{Name: "interval", Short: "", Kind: Duration},
	{Name: "busy-poll", Short: "", Kind: Bool},
	{Name: "timeout", Short: "", Kind: Duration},
	{Name: "host-counters", Short: "", Kind: Bool},
	{Name: "window", Short: "w", Kind: Size},
	{Name: "tos", Short: "", Kind: Word},
	{Name: "dscp", Short: "", Kind: Word},
	{Name: "bind", Short: "B", Kind: Addr},
	{Name: "title", Short: "T", Kind: Text},
	{Name: "load", Short: "", Kind: List},
	{Name: "load-time", Short: "", Kind: Duration},
	{Name: "load-idle", Short: "", Kind: Duration},
	{Name: "load-after", Short: "", Kind: Duration},
	{Name: "connect-timeout", Short: "", Kind: Duration},
	{Name: "tls-pin", Short: "", Kind: Word},
}

// UDPMon is the udpmon command's.
var UDPMon = []Flag{
	{Name: "sizes", Short: "", Kind: List},
	{Name: "spacing", Short: "", Kind: List},
	{Name: "count", Short: "", Kind: Int},
	{Name: "reverse", Short: "R", Kind: Bool},
	{Name: "window", Short: "w", Kind: Size},
	{Name: "no-gso", Short: "", Kind: Bool},
	{Name: "spin", Short: "", Kind: Bool},
	{Name: "tos", Short: "", Kind: Word},
	{Name: "late-threshold", Short: "", Kind: Duration},
	{Name: "point-timeout", Short: "", Kind: Duration},
	{Name: "bind", Short: "B", Kind: Addr},
	{Name: "connect-timeout", Short: "", Kind: Duration},
	{Name: "no-progress", Short: "", Kind: Bool},
	{Name: "title", Short: "T", Kind: Text},
	{Name: "tls-pin", Short: "", Kind: Word},
}

// Trace is the trace command's. A trace's destination port is not the
// daemon's: the task's port is left out of its arguments.
var Trace = []Flag{
	{Name: "max-hops", Short: "", Kind: Int},
	{Name: "probes", Short: "", Kind: Int},
	{Name: "proto", Short: "", Kind: Word},
	{Name: "probe-timeout", Short: "", Kind: Duration},
	{Name: "max-time", Short: "", Kind: Duration},
	{Name: "raw", Short: "", Kind: Bool},
}

// Ping is the ping command's. Like a trace, a ping measures a host
// whatever it runs: the task's port is left out of its arguments.
var Ping = []Flag{
	{Name: "count", Short: "", Kind: Int},
	{Name: "interval", Short: "", Kind: Duration},
	{Name: "size", Short: "", Kind: Int},
	{Name: "timeout", Short: "", Kind: Duration},
	{Name: "raw", Short: "", Kind: Bool},
	{Name: "version4", Short: "4", Kind: Bool},
	{Name: "version6", Short: "6", Kind: Bool},
}

// TCPConnect is the tcp-connect command's; the port it connects to is
// --tcp-port (the task's port is its server's).
var TCPConnect = []Flag{
	{Name: "count", Short: "", Kind: Int},
	{Name: "interval", Short: "", Kind: Duration},
	{Name: "timeout", Short: "", Kind: Duration},
	{Name: "tcp-port", Short: "", Kind: Int},
	{Name: "version4", Short: "4", Kind: Bool},
	{Name: "version6", Short: "6", Kind: Bool},
}

// Of is a command's flags that a line may carry; nil for a command a
// test line can't name.
func Of(command string) []Flag {
	switch command {
	case "client":
		return Client
	case "rr":
		return RR
	case "udpmon":
		return UDPMon
	case "trace":
		return Trace
	case "ping":
		return Ping
	case "tcp-connect":
		return TCPConnect
	}
	return nil
}

// Lookup is a command's flag by long name.
func Lookup(command, name string) (Flag, bool) {
	for _, f := range Of(command) {
		if f.Name == name {
			return f, true
		}
	}
	return Flag{}, false
}

// LookupShort is a command's flag by shorthand.
func LookupShort(command, short string) (Flag, bool) {
	for _, f := range Of(command) {
		if f.Short != "" && f.Short == short {
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

// Why a flag of the commands is refused in a test line, by long name;
// shortRefused maps their shorthands. Every flag the commands have is
// either declared above or named here (the cli package's tests hold the
// two lists to its flag sets).
var refused = map[string]string{
	"port":              "the port comes from the task's destination address",
	"json":              "the daemon sets the output itself",
	"json-stream":       "the daemon sets the output itself",
	"csv":               "the daemon sets the output itself",
	"reportstyle":       "the daemon sets the output itself",
	"enhanced":          "the daemon sets the output itself",
	"log-level":         "the daemon sets the output itself",
	"log-format":        "the daemon sets the output itself",
	"timestamps":        "the daemon sets the output itself",
	"forceflush":        "the daemon sets the output itself",
	"verbose":           "the daemon sets the output itself",
	"get-server-output": "the daemon sets the output itself",
	"logfile":           "names a file: a test line may not",
	"tcpinfo-csv":       "names a file: a test line may not",
	"file":              "names a file: a test line may not",
	"affinity":          "pins the whole process that runs it, the daemon's other tests with it",
	"xbind":             "binds to an interface: the host's configuration chooses it",
	"cntl-ka":           "the daemon keeps its control connections alive itself",
	"auth-key-file":     "names a key file: the daemon's configuration gives keys",
	"tls-ca":            "names a file: the daemon's configuration gives trust",
	"save":              "the daemon stores every run itself",
	"db":                "names an archive: the daemon stores every run in its own",
	"campaign":          "the daemon stores every run itself",
	"client":            "the destination comes from the task",
	"server":            "a test line runs a test, not a server",
	"help":              "not a measurement flag",
	"version":           "not a measurement flag",
}

var shortRefused = map[string]string{
	"p": "port", "J": "json", "y": "reportstyle", "e": "enhanced", "V": "verbose", "c": "client", "s": "server", "h": "help", "v": "version",
	"F": "file", "A": "affinity", "X": "xbind",
}

// Refused is why a flag is refused in every test line, by long name.
func Refused(name string) (string, bool) {
	why, ok := refused[name]
	return why, ok
}

// RefusedShort is the long name of a refused shorthand.
func RefusedShort(short string) (string, bool) {
	long, ok := shortRefused[short]
	return long, ok
}
