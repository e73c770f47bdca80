package measure

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// UDPMon is a UDPmon sweep (wireperf udpmon): its flags. Cfg is the
// sweep; Finish fills its sizes and spacings from Sizes and Spacings.
type UDPMon struct {
	Cfg            udpmon.Plan
	Port           int
	Bind           string
	ConnectTimeout time.Duration
	Sizes          string
	Spacings       string
	CSV            bool
	JSON           bool
	Title          string
}

// NewUDPMon is a sweep with every default: UDPmon's classic grid of full
// and small packets, 0 to 40 µs.
func NewUDPMon() *UDPMon {
	return &UDPMon{
		Port: spec.DefaultPort, ConnectTimeout: spec.DefaultConnectTO,
		Cfg:      udpmon.Plan{Count: udpmon.DefaultCount},
		Sizes:    "64:1472:64",
		Spacings: "0:40us:2us",
	}
}

// Register adds the sweep's flags to fs.
func (f *UDPMon) Register(fs *pflag.FlagSet) {
	c := &f.Cfg
	fs.IntVarP(&f.Port, "port", "p", f.Port, "server port")
	fs.StringVar(&f.Sizes, "sizes", f.Sizes, "UDP payload sizes in bytes: a list (512,1472) or START:END:STEP")
	fs.StringVar(&f.Spacings, "spacing", f.Spacings, "gaps between datagrams: a list (0,12us) or START:END:STEP (0:40us:1us); a bare number is µs; 0 sends as fast as possible")
	fs.Int64Var(&c.Count, "count", c.Count, "datagrams per point")
	fs.BoolVarP(&c.Reverse, "reverse", "R", false, "the server sends, the client receives")
	fs.VarP(flagvalue.Size(&c.Window), "window", "w", "socket buffers on both ends (e.g. 4K to see the receiving host drop); default: the receiver asks for 8 MiB")
	fs.BoolVar(&c.NoGSO, "no-gso", false, "no segmentation offload on send nor GRO on receive")
	fs.BoolVar(&c.Spin, "spin", false, "busy-wait the last microseconds of each gap for exact gaps, at the cost of a core (points of spacing 0 do not wait)")
	fs.Var(flagvalue.TOS(&c.TOS), "tos", "IP type-of-service byte")
	fs.Var(flagvalue.Duration(&c.LateThreshold), "late-threshold", "a missing datagram counts as lost after this long (2s)")
	fs.Var(flagvalue.Duration(&c.PointTimeout), "point-timeout", "give up on a point after this long (default: twice its sending time plus 20s)")
	fs.StringVarP(&f.Bind, "bind", "B", "", "local address for the client's sockets")
	fs.Var(flagvalue.Duration(&f.ConnectTimeout), "connect-timeout", "give up connecting after this long")
	fs.BoolVar(&f.CSV, "csv", false, "CSV, one row per point")
	fs.BoolVarP(&f.JSON, "json", "J", false, "one JSON document: every point with both hosts' counters and its histograms")
	fs.StringVarP(&f.Title, "title", "T", "", "prefix every table line with this title")
}

// Finish checks the parsed flags and fills the sweep's grid.
func (f *UDPMon) Finish() error {
	sizes, err := ParseSizes(f.Sizes)
	if err != nil {
		return fmt.Errorf("--sizes %s: %v", f.Sizes, err)
	}
	spacings, err := ParseDurations(f.Spacings)
	if err != nil {
		return fmt.Errorf("--spacing %s: %v", f.Spacings, err)
	}
	f.Cfg.Sizes, f.Cfg.Spacings = sizes, spacings
	if f.CSV && f.JSON {
		return fmt.Errorf("--csv and --json: choose one")
	}
	if f.Cfg.Count < 1 {
		return fmt.Errorf("--count %d: want at least 1", f.Cfg.Count)
	}
	if f.Port < 1 || f.Port > 65535 {
		return fmt.Errorf("-p %d: want 1 to 65535", f.Port)
	}
	if f.ConnectTimeout <= 0 {
		return fmt.Errorf("--connect-timeout: must be positive")
	}
	return f.Cfg.Validate()
}
