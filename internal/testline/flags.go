package testline

// The measurement flags a scheduled test may carry, per command. A flag
// not listed here is refused: a test line comes from a mesh file, the
// API or another host's rows in a shared archive, so it is data, and
// only flags that shape the measurement are taken. The output, the
// archive, files, keys and the destination belong to the daemon that
// runs the test.

// value is the kind of a flag's value, and so which characters it may
// hold.
type value int

const (
	vBool     value = iota // no value, or =true/=false
	vDuration              // 10, 2.5, 90s, 500ms
	vSize                  // 16M, 1472, 8K
	vRate                  // 750m, 10G/32
	vInt                   // 4
	vWord                  // cubic, EF, 0x10, a hex pin
	vList                  // 64,512,1472 or 0:40us:1us or tcp,4,down,300m
	vText                  // a title: printable, no blanks (lines are split at blanks)
	vAddr                  // an IP address of this host (--bind)
	vPort                  // a local port above the privileged range (--cport)
)

// flag is one allowed flag.
type flag struct {
	short string // "" when none
	kind  value
}

var clientFlags = map[string]flag{
	"time":               {"t", vDuration},
	"bytes":              {"n", vSize},
	"interval":           {"i", vDuration},
	"omit":               {"O", vDuration},
	"parallel":           {"P", vInt},
	"udp":                {"u", vBool},
	"bitrate":            {"b", vRate},
	"pps":                {"", vInt},
	"spacing":            {"", vDuration},
	"spin":               {"", vBool},
	"no-gso":             {"", vBool},
	"late-threshold":     {"", vDuration},
	"reverse":            {"R", vBool},
	"bidir":              {"", vBool},
	"window":             {"w", vSize},
	"length":             {"l", vSize},
	"set-mss":            {"M", vInt},
	"zerocopy":           {"Z", vBool},
	"no-delay":           {"N", vBool},
	"congestion":         {"C", vWord},
	"tos":                {"S", vWord},
	"dscp":               {"", vWord},
	"bind":               {"B", vAddr},
	"cport":              {"", vPort},
	"version4":           {"4", vBool},
	"version6":           {"6", vBool},
	"blockcount":         {"k", vSize},
	"fq-rate":            {"", vRate},
	"dont-fragment":      {"", vBool},
	"flowlabel":          {"L", vWord},
	"rcv-timeout":        {"", vInt},
	"title":              {"T", vText},
	"format":             {"f", vWord},
	"iperf3":             {"", vBool},
	"retry-busy":         {"", vDuration},
	"udp-counters-64bit": {"", vBool},
	"tcpinfo-interval":   {"", vDuration},
	"bottleneck":         {"", vRate},
	"connect-timeout":    {"", vDuration},
	"tls-pin":            {"", vWord},
}

var rrFlags = map[string]flag{
	"udp":             {"", vBool},
	"tcp":             {"", vBool},
	"crr":             {"", vBool},
	"sizes":           {"", vList},
	"response-size":   {"", vSize},
	"time":            {"t", vDuration},
	"count":           {"", vInt},
	"interval":        {"", vDuration},
	"busy-poll":       {"", vBool},
	"timeout":         {"", vDuration},
	"host-counters":   {"", vBool},
	"window":          {"w", vSize},
	"tos":             {"", vWord},
	"dscp":            {"", vWord},
	"bind":            {"B", vAddr},
	"title":           {"T", vText},
	"load":            {"", vList},
	"load-time":       {"", vDuration},
	"load-idle":       {"", vDuration},
	"load-after":      {"", vDuration},
	"connect-timeout": {"", vDuration},
	"tls-pin":         {"", vWord},
}

var udpmonFlags = map[string]flag{
	"sizes":           {"", vList},
	"spacing":         {"", vList},
	"count":           {"", vInt},
	"reverse":         {"R", vBool},
	"window":          {"w", vSize},
	"no-gso":          {"", vBool},
	"spin":            {"", vBool},
	"tos":             {"", vWord},
	"late-threshold":  {"", vDuration},
	"point-timeout":   {"", vDuration},
	"bind":            {"B", vAddr},
	"connect-timeout": {"", vDuration},
	"no-progress":     {"", vBool},
	"title":           {"T", vText},
	"tls-pin":         {"", vWord},
}

// A trace's destination port is not the daemon's: the task's port is
// left out of its arguments (Line.Args).
var traceFlags = map[string]flag{
	"max-hops":      {"", vInt},
	"probes":        {"", vInt},
	"proto":         {"", vWord},
	"probe-timeout": {"", vDuration},
	"max-time":      {"", vDuration},
	"raw":           {"", vBool},
}

// ping's and tcp-connect's flags (--tcp-port is the port tcp-connect
// probes, any from 1).
var pingFlags = map[string]flag{
	"count":    {"", vInt},
	"interval": {"", vDuration},
	"size":     {"", vInt},
	"timeout":  {"", vDuration},
	"raw":      {"", vBool},
	"version4": {"4", vBool},
	"version6": {"6", vBool},
}

var tcpConnectFlags = map[string]flag{
	"count":    {"", vInt},
	"interval": {"", vDuration},
	"timeout":  {"", vDuration},
	"tcp-port": {"", vInt},
	"version4": {"4", vBool},
	"version6": {"6", vBool},
}

// Why a flag of the commands is refused in a test line, by long name;
// shortRefused maps their shorthands. Every flag the commands have is
// either allowed above or named here (the cli package's tests hold the
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

// FlagSpec is how an allowed flag is written.
type FlagSpec struct {
	Short string // its shorthand, "" when none
	Bool  bool   // takes no value
}

// Allowed is a command's allowed flags by long name (nil for a command a
// test line can't name). The cli package's tests hold it to the
// commands' flag sets.
func Allowed(command string) map[string]FlagSpec {
	t := allowed(command)
	if t == nil {
		return nil
	}
	out := make(map[string]FlagSpec, len(t))
	for name, f := range t {
		out[name] = FlagSpec{Short: f.short, Bool: f.kind == vBool}
	}
	return out
}

// Refused is why a flag is refused in every test line, by long name.
func Refused(name string) (string, bool) {
	why, ok := refused[name]
	return why, ok
}
