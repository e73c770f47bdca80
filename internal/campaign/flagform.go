package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/measure/testflags"
)

// The flags form of a campaign (`wireperf sweep HOST --AXIS LIST...`):
// its flags, the spec they make, and the arguments stored with the
// campaign so that a resume plans exactly the same runs.

// Flags are the flags that say what a campaign is (not where or how it
// runs): the axes, each a comma list under the client's flag name, and
// the campaign's settings.
type Flags struct {
	axes       map[string]*string
	udp        bool
	reverse    bool
	bidir      bool
	port       int
	name       string
	repeat     int
	order      string
	shuffleKey int64
	pause      time.Duration
	count      int64
	rr         bool
}

// axisFlags are the axes' flags in the order a campaign lists them: long
// name and what a value is. Their shorthands are the client's, as
// testflags declares them.
var axisFlags = []struct{ name, help string }{
	{AxisWindow, "socket buffers, e.g. 64K,1M,16M"},
	{AxisParallel, "parallel streams, e.g. 1,4,16"},
	{AxisTime, "test lengths, e.g. 10s,60s"},
	{AxisLength, "bytes per write, e.g. 64,512,1472"},
	{AxisBitrate, "rates per stream, e.g. 100m,1g"},
	{AxisSpacing, "UDP gaps between datagrams, e.g. 0,10us,20us"},
	{AxisCongestion, "congestion control algorithms, e.g. cubic,bbr"},
	{AxisSetMSS, "TCP maximum segment sizes"},
	{AxisDirection, "up (client sends), down (-R) or bidir"},
	{AxisProto, "tcp or udp"},
}

// A FlagError is a campaign's flags that make no campaign: the command
// line's to fix.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

func flagErrorf(format string, args ...any) error {
	return &FlagError{fmt.Errorf(format, args...)}
}

// NewFlags returns the flags with no axis given.
func NewFlags() *Flags { return &Flags{axes: map[string]*string{}} }

// Register registers the flags on fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	for _, a := range axisFlags {
		p := new(string)
		f.axes[a.name] = p
		d, _ := testflags.Lookup("client", a.name) // direction and proto are no client flag: no shorthand
		fs.StringVarP(p, a.name, d.Short, "", a.help)
	}
	fs.BoolVarP(&f.udp, "udp", "u", false, "UDP tests (as --proto udp)")
	fs.BoolVarP(&f.reverse, "reverse", "R", false, "the server sends (as --direction down)")
	fs.BoolVar(&f.bidir, "bidir", false, "both ends send (as --direction bidir)")
	fs.IntVarP(&f.port, "port", "p", 0, "server port (default 5201)")
	fs.StringVar(&f.name, "name", "", "the campaign's name (required; resume with --resume NAME)")
	fs.IntVar(&f.repeat, "repeat", 1, "runs per point")
	fs.StringVar(&f.order, "order", OrderShuffle, "shuffle (in an order recorded with the campaign) or sequential")
	fs.Int64Var(&f.shuffleKey, "shuffle-key", 0, "the number that fixes the shuffle's order (default: chosen and recorded)")
	fs.Var(flagvalue.Duration(&f.pause), "pause", "pause between runs, e.g. 5s")
	fs.Int64Var(&f.count, "count", 0, "UDPmon sweeps: datagrams per run (with -u, -l and --spacing axes)")
	fs.BoolVar(&f.rr, "rr", false, "each run is a request-response test (wireperf rr); --length is the request size")
}

// ChangedFlag names a flag of fs that says what the campaign is, if one
// was given (they conflict with a campaign from a file or the archive).
func ChangedFlag(fs *pflag.FlagSet) string {
	probe := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	NewFlags().Register(probe)
	name := ""
	probe.VisitAll(func(fl *pflag.Flag) {
		if name == "" && fs.Changed(fl.Name) {
			name = fl.Name
		}
	})
	return name
}

// Spec builds the campaign from the command line: fs holds the flags f
// registered, args are the arguments, dash where -- split them (-1 when
// it did not): HOST before it, the client flags of every run after it.
// Its errors are *FlagError.
func (f *Flags) Spec(fs *pflag.FlagSet, args []string, dash int) (*Spec, error) {
	hosts, fixed := splitArgs(args, dash)
	if len(hosts) != 1 {
		return nil, flagErrorf("sweep needs one HOST (or -f FILE, or --resume NAME); got %d", len(hosts))
	}
	if f.name == "" {
		return nil, flagErrorf("sweep needs --name: the campaign's name, to find and resume it")
	}
	s := &Spec{Name: f.name, Targets: hosts, Port: f.port, Fixed: fixed, Repeat: f.repeat, Order: f.order, ShuffleKey: f.shuffleKey, Pause: f.pause, Count: f.count}
	if f.rr {
		s.Test = TestRR
	}
	for _, a := range axisFlags {
		if !fs.Changed(a.name) {
			continue
		}
		vals, err := ParseList(a.name, *f.axes[a.name])
		if err != nil {
			return nil, flagErrorf("--%s: %v", a.name, err)
		}
		s.Axes = append(s.Axes, AxisValues{Name: a.name, Values: vals})
	}
	fixedAxis := func(flag, axis, value string) error {
		if fs.Changed(axis) {
			return flagErrorf("--%s and --%s: choose one", flag, axis)
		}
		v, _ := ParseValue(axis, value)
		s.Axes = append(s.Axes, AxisValues{Name: axis, Values: []Value{v}})
		return nil
	}
	if f.udp {
		if err := fixedAxis("udp", AxisProto, "udp"); err != nil {
			return nil, err
		}
	}
	if f.reverse && f.bidir {
		return nil, flagErrorf("-R and --bidir: choose one")
	}
	if f.reverse {
		if err := fixedAxis("reverse", AxisDirection, "down"); err != nil {
			return nil, err
		}
	}
	if f.bidir {
		if err := fixedAxis("bidir", AxisDirection, "bidir"); err != nil {
			return nil, err
		}
	}
	if err := s.Validate(); err != nil {
		return nil, &FlagError{err}
	}
	return s, nil
}

func splitArgs(args []string, dash int) (hosts, fixed []string) {
	if dash >= 0 {
		return args[:dash], args[dash:]
	}
	return args, nil
}

// storedFlags is the flags form of a campaign as stored: the arguments
// that made it.
type storedFlags struct {
	Args []string `json:"args"`
}

// StoredArgs is what the archive stores of a flags-form campaign (spec
// format "flags"): the command line that made it, in a stable form.
func StoredArgs(fs *pflag.FlagSet, args []string, dash int) string {
	stored, _ := json.Marshal(storedFlags{Args: CanonicalArgs(fs, args, dash)})
	return string(stored)
}

// CanonicalArgs is the command line that made a flags-form campaign, in a
// stable form: every flag set, HOST, then -- and the client flags. The
// flags that say where and how it runs (--db, --dry-run, --quiet,
// --log-level, --resume) are left out.
func CanonicalArgs(fs *pflag.FlagSet, args []string, dash int) []string {
	var out []string
	fs.Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "db", "dry-run", "quiet", "log-level", "resume":
			return // where and how it runs, not what
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	hosts, fixed := splitArgs(args, dash)
	out = append(out, hosts...)
	if len(fixed) > 0 {
		out = append(append(out, "--"), fixed...)
	}
	return out
}

// FromStored rebuilds a stored campaign's spec, from its file or from
// the command line that made it. Its errors are a *FlagError when the
// stored arguments make no campaign.
func FromStored(c archive.Campaign) (*Spec, error) {
	if c.SpecFormat == "yaml" {
		return ParseFile(c.Name+".yaml", []byte(c.Spec))
	}
	var sf storedFlags
	if err := json.Unmarshal([]byte(c.Spec), &sf); err != nil {
		return nil, err
	}
	f, fs := NewFlags(), pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(sf.Args); err != nil {
		return nil, err
	}
	return f.Spec(fs, fs.Args(), fs.ArgsLenAtDash())
}

// IsFlagError says err is a *FlagError.
func IsFlagError(err error) bool {
	var fe *FlagError
	return errors.As(err, &fe)
}
