package campaign

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/spec"
)

// PointTest is a point's test, read by the test's own model (package
// measure) as its command reads it: a sweep run is exactly the test it
// names. The campaign's fixed flags (and its port) are the line measure
// parses; each of the point's axis values is then set on the parsed
// flags through its declaration (testflags), as the command line sets
// it. An rr point takes the length axis as its request size (--sizes)
// and proto as --udp or --tcp.
func PointTest(s *Spec, p Point) (measure.Test, error) {
	base := s.Fixed
	if s.Port != 0 {
		base = append([]string{fmt.Sprintf("--port=%d", s.Port)}, base...)
	}
	if s.Test == TestRR {
		return rrPoint(base, p.Settings)
	}
	return clientPoint(s, base, p.Settings)
}

// Tests reads the test of every point the runs name, before any runs:
// by point key.
func Tests(s *Spec, runs []Run) (map[string]measure.Test, error) {
	out := map[string]measure.Test{}
	for _, r := range runs {
		if _, ok := out[r.Point.Key()]; ok {
			continue
		}
		t, err := PointTest(s, r.Point)
		if err != nil {
			return nil, fmt.Errorf("point %s: %v", r.Point.Label(), err)
		}
		out[r.Point.Key()] = t
	}
	return out, nil
}

// Length is how long a run's test takes as its model says; a test whose
// length its flags don't tell (-n as fast as the path allows) counts 0.
func Length(tests map[string]measure.Test) func(Run) time.Duration {
	return func(r Run) time.Duration {
		d, _ := tests[r.Point.Key()].Duration()
		return d
	}
}

// Cmdline is the command a point's run is: what the archive shows.
func Cmdline(s *Spec, p Point) string {
	kind, args, err := pointArgs(s, p)
	if err != nil {
		kind, args = measure.KindClient, p.Args(s.Fixed)
	}
	if s.Port != 0 {
		args = append(args, fmt.Sprintf("--port=%d", s.Port))
	}
	return strings.Join(append([]string{"wireperf", string(kind), p.Target}, args...), " ")
}

// pointArgs are a point's test command and its flags, the port aside.
func pointArgs(s *Spec, p Point) (measure.Kind, []string, error) {
	var args []string
	if s.Test != TestRR {
		return measure.KindClient, p.Args(s.Fixed), nil
	}
	for _, a := range p.Args(s.Fixed) {
		switch {
		case strings.HasPrefix(a, "--length="):
			a = "--sizes=" + strings.TrimPrefix(a, "--length=")
		case a == "--reverse" || a == "--bidir":
			return "", nil, fmt.Errorf("%s does not apply to request-response tests", a)
		}
		args = append(args, a)
	}
	if v, ok := p.Value(AxisProto); ok && v.Label == "tcp" {
		args = append(args, "--tcp") // udp is rr's default, and its own flag
	}
	return measure.KindRR, args, nil
}

// commandLineOnly names the first of flags (a command line's own, which
// a sweep sets itself) among args.
func commandLineOnly(args []string, flags ...string) (string, bool) {
	for _, a := range args {
		for _, f := range flags {
			if a == "--"+f || strings.HasPrefix(a, "--"+f+"=") {
				return f, true
			}
		}
	}
	return "", false
}

// setAxes sets a point's axis values on the flags of a test of kind,
// each through the flag its axis is: the flag testflags declares for the
// command, or, for direction and proto, the flags they stand for.
func setAxes(kind measure.Kind, fs *pflag.FlagSet, settings []Setting) error {
	set := func(name, value string) error {
		if _, ok := testflags.Lookup(string(kind), name); !ok {
			return fmt.Errorf("unknown flag: --%s", name) // as the command line says it
		}
		return fs.Set(name, value)
	}
	for _, st := range settings {
		v := st.Value
		switch st.Axis {
		case AxisDirection:
			flag := map[string]string{"down": "reverse", "bidir": "bidir"}[v.Label]
			switch {
			case flag == "":
			case kind == measure.KindRR:
				return fmt.Errorf("--%s does not apply to request-response tests", flag)
			default:
				if err := set(flag, "true"); err != nil {
					return err
				}
			}
			continue
		case AxisProto:
			// udp is rr's default, and its own flag; tcp is the client's
			// default.
			if v.Label == "udp" || kind == measure.KindRR {
				if err := set(v.Label, "true"); err != nil {
					return err
				}
			}
			continue
		}
		name, value := st.Axis, v.Label
		if v.Arg != "" {
			value = v.Arg
		}
		if kind == measure.KindRR && name == AxisLength {
			name = "sizes" // an rr point's length is its request size
		}
		if err := set(name, value); err != nil {
			return err
		}
	}
	return nil
}

func rrPoint(base []string, settings []Setting) (measure.Test, error) {
	const ownJSON = "a sweep of rr tests stores each run's JSON itself: give no -J, --logfile or --load"
	if _, ok := commandLineOnly(base, "logfile"); ok {
		return measure.Test{}, errors.New(ownJSON)
	}
	if f, ok := commandLineOnly(base, "reverse", "bidir"); ok {
		return measure.Test{}, fmt.Errorf("--%s does not apply to request-response tests", f)
	}
	t, _, err := measure.ParseThen(measure.KindRR, base, func(t measure.Test, fs *pflag.FlagSet) error {
		if err := setAxes(measure.KindRR, fs, settings); err != nil {
			return err
		}
		if t.RR.JSON || t.RR.Load != "" {
			return errors.New(ownJSON)
		}
		return nil
	})
	if err != nil {
		return measure.Test{}, err
	}
	t.RR.Spec.HostCounters = true
	return t, nil
}

func clientPoint(s *Spec, base []string, settings []Setting) (measure.Test, error) {
	const ownJSON = "a sweep stores each run's JSON itself: give no -J, --json-stream or --logfile"
	if _, ok := commandLineOnly(base, "save", "db"); ok {
		return measure.Test{}, errors.New("a sweep stores every run in its own --db: give no --save or --db among a run's flags")
	}
	if _, ok := commandLineOnly(base, "logfile"); ok {
		return measure.Test{}, errors.New(ownJSON)
	}
	t, _, err := measure.ParseThen(measure.KindClient, base, func(t measure.Test, fs *pflag.FlagSet) error {
		if err := setAxes(measure.KindClient, fs, settings); err != nil {
			return err
		}
		c := t.Client
		if c.JSON || c.JSONStream {
			return errors.New(ownJSON)
		}
		if s.Count <= 0 {
			return nil
		}
		// UDPmon's method: a fixed number of datagrams at a fixed gap,
		// however long they take (-n, no -t).
		if fs.Changed("time") || fs.Changed("bytes") {
			return errors.New("--count sets the bytes of each run: give no -t or -n")
		}
		if !c.UDP {
			return errors.New("--count is for UDP sweeps (-u)")
		}
		length := c.Length
		if !fs.Changed("length") {
			length = int64(spec.DefaultUDPLength)
		}
		return fs.Set("bytes", strconv.FormatInt(s.Count*length, 10))
	})
	if err != nil {
		return measure.Test{}, err
	}
	t.Client.Spec.HostCounters = true // both hosts' CPU split, kept beside the run
	return t, nil
}
