package measure

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// RR is a request-response test (wireperf rr): its flags.
type RR struct {
	Spec           spec.Spec
	Port           int
	Bind           string
	ConnectTimeout time.Duration
	UDP, TCP, CRR  bool
	Sizes          string
	Response       int64
	Timeout        time.Duration
	JSON           bool

	Load      string
	LoadTime  time.Duration
	LoadIdle  time.Duration
	LoadAfter time.Duration
	// LoadSpec is --load's bulk test, set by Finish.
	LoadSpec spec.Spec
}

// Latency under load defaults: a few seconds of idle probes, the load,
// a few seconds after; probes every 10 ms.
const (
	DefaultLoadTime      = 10 * time.Second
	DefaultLoadIdle      = 3 * time.Second
	DefaultLoadAfter     = 3 * time.Second
	DefaultLoadProbeTick = 10 * time.Millisecond
)

// NewRR is a request-response test with every default.
func NewRR() *RR {
	return &RR{
		Spec:           spec.Spec{Protocol: spec.RR, Streams: 1, Duration: spec.DefaultRRDuration},
		Port:           spec.DefaultPort,
		ConnectTimeout: spec.DefaultConnectTO,
		Sizes:          "64",
		LoadTime:       DefaultLoadTime,
		LoadIdle:       DefaultLoadIdle,
		LoadAfter:      DefaultLoadAfter,
	}
}

// Register adds the test's flags to fs: those testflags.RR declares
// and the command line doesn't bind (see RegisterCommand).
func (f *RR) Register(fs *pflag.FlagSet) {
	testflags.Register(fs, testflags.Measured(testflags.RR), f.binds())
}

// RegisterCommand adds every flag of the rr command to fs: the test's
// and the command line's own, bound as own says, with the flags a
// helper shared by several commands registered on shared (--db, the
// key and TLS flags).
func (f *RR) RegisterCommand(fs *pflag.FlagSet, own Binds, shared *pflag.FlagSet) {
	testflags.Register(fs, testflags.RR, f.binds().With(own).With(testflags.Adopt(shared)))
}

// binds is what each of the test's flags sets.
func (f *RR) binds() testflags.Binds {
	s := &f.Spec
	return testflags.Binds{
		"port":            &f.Port,
		"udp":             &f.UDP,
		"tcp":             &f.TCP,
		"crr":             &f.CRR,
		"sizes":           &f.Sizes,
		"response-size":   flagvalue.Size(&f.Response),
		"time":            flagvalue.Duration(&s.Duration),
		"count":           &s.RRCount,
		"interval":        flagvalue.Duration(&s.RRInterval),
		"busy-poll":       &s.RRBusyPoll,
		"timeout":         flagvalue.Duration(&f.Timeout),
		"host-counters":   &s.HostCounters,
		"window":          flagvalue.Size(&s.Window),
		"tos":             flagvalue.TOS(&s.TOS),
		"dscp":            flagvalue.DSCP(&s.TOS),
		"bind":            &f.Bind,
		"title":           &s.Title,
		"json":            &f.JSON,
		"load":            &f.Load,
		"load-time":       flagvalue.Duration(&f.LoadTime),
		"load-idle":       flagvalue.Duration(&f.LoadIdle),
		"load-after":      flagvalue.Duration(&f.LoadAfter),
		"connect-timeout": flagvalue.Duration(&f.ConnectTimeout),
	}
}

// Finish turns the parsed flags (fs is the set Register filled) into a
// checked spec.
func (f *RR) Finish(fs *pflag.FlagSet) error {
	changed := fs.Changed
	s := &f.Spec
	n := 0
	for _, on := range []bool{f.UDP, f.TCP, f.CRR} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("--udp, --tcp and --crr: choose one")
	case f.TCP:
		s.RRMode = spec.RRTCP
	case f.CRR:
		s.RRMode = spec.RRCRR
	default:
		s.RRMode = spec.RRUDP
	}
	sizes, err := ParseSizes(f.Sizes)
	if err != nil {
		return fmt.Errorf("--sizes %s: %v", f.Sizes, err)
	}
	s.RRSizes = spec.FormatRRSizes(sizes...)
	if f.Response < 0 || f.Response > int64(spec.RRMaxTCPSize) {
		return fmt.Errorf("--response-size %d: out of range", f.Response)
	}
	s.RRResponse = int(f.Response)
	if changed("count") && !changed("time") {
		s.Duration = 0 // by count only
	}
	if f.Port < 1 || f.Port > 65535 {
		return fmt.Errorf("-p %d: want 1 to 65535", f.Port)
	}
	if f.ConnectTimeout <= 0 {
		return fmt.Errorf("--connect-timeout: must be positive")
	}
	if f.Timeout < 0 {
		return fmt.Errorf("--timeout: must not be negative")
	}
	if f.Load != "" {
		if len(sizes) != 1 {
			return fmt.Errorf("--load: give one --sizes value for the probes")
		}
		if !changed("interval") {
			s.RRInterval = DefaultLoadProbeTick
		}
		if f.LoadSpec, err = f.loadSpec(); err != nil {
			return err
		}
		s.RRCount = 0
		s.Duration = f.LoadIdle + f.LoadTime + f.LoadAfter
	} else {
		for _, name := range []string{"load-time", "load-idle", "load-after"} {
			if changed(name) {
				return fmt.Errorf("--%s applies with --load", name)
			}
		}
	}
	return s.Validate()
}

// loadSpec parses --load: PROTO,STREAMS[,up|down|both][,RATE]. A UDP
// load needs a rate (per stream, as -b); a TCP load may have one (paced).
func (f *RR) loadSpec() (spec.Spec, error) {
	const want = "want PROTO,STREAMS[,up|down|both][,RATE], e.g. tcp,4 or udp,2,down,300m"
	parts := strings.Split(f.Load, ",")
	bad := func(why string) (spec.Spec, error) {
		return spec.Spec{}, fmt.Errorf("--load %s: %s (%s)", f.Load, why, want)
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
	ls.Duration = f.LoadTime
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
