package measure

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
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

// Register adds the test's flags to fs: those testflags.UDPMon declares
// and the command line doesn't bind (see RegisterCommand).
func (f *UDPMon) Register(fs *pflag.FlagSet) {
	testflags.Register(fs, testflags.Measured(testflags.UDPMon), f.binds())
}

// RegisterCommand adds every flag of the udpmon command to fs: the test's
// and the command line's own, bound as own says, with the flags a
// helper shared by several commands registered on shared (--db, the
// key and TLS flags).
func (f *UDPMon) RegisterCommand(fs *pflag.FlagSet, own Binds, shared *pflag.FlagSet) {
	testflags.Register(fs, testflags.UDPMon, f.binds().With(own).With(testflags.Adopt(shared)))
}

// binds is what each of the test's flags sets.
func (f *UDPMon) binds() testflags.Binds {
	c := &f.Cfg
	return testflags.Binds{
		"port":            &f.Port,
		"sizes":           &f.Sizes,
		"spacing":         &f.Spacings,
		"count":           &c.Count,
		"reverse":         &c.Reverse,
		"window":          flagvalue.Size(&c.Window),
		"no-gso":          &c.NoGSO,
		"spin":            &c.Spin,
		"tos":             flagvalue.TOS(&c.TOS),
		"late-threshold":  flagvalue.Duration(&c.LateThreshold),
		"point-timeout":   flagvalue.Duration(&c.PointTimeout),
		"bind":            &f.Bind,
		"connect-timeout": flagvalue.Duration(&f.ConnectTimeout),
		"csv":             &f.CSV,
		"json":            &f.JSON,
		"title":           &f.Title,
	}
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
