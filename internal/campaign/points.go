package campaign

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/spec"
)

// PointTest is a point's test, read by the test's own model (package
// measure) as its command reads it: a sweep run is exactly the test it
// names. A client point's flags are the campaign's fixed flags and its
// axes' settings; an rr point takes the length axis as its request size
// (--sizes) and proto as --udp or --tcp.
func PointTest(s *Spec, p Point) (measure.Test, error) {
	kind, args, err := pointArgs(s, p)
	if err != nil {
		return measure.Test{}, err
	}
	if s.Port != 0 {
		args = append([]string{fmt.Sprintf("--port=%d", s.Port)}, args...)
	}
	if kind == measure.KindRR {
		return rrPoint(args)
	}
	return clientPoint(s, args)
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

// parsePoint reads a point's flags into a test of kind; between runs
// after the parse and before the model's checks.
func parsePoint(kind measure.Kind, args []string, between func(measure.Test, *pflag.FlagSet) error) (measure.Test, error) {
	fs := measure.NewFlagSet(string(kind))
	t, err := measure.New(kind, fs)
	if err != nil {
		return t, err
	}
	if err := fs.Parse(args); err != nil {
		return t, err
	}
	if fs.NArg() > 0 {
		return t, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := between(t, fs); err != nil {
		return t, err
	}
	return t, t.Finish(fs)
}

func rrPoint(args []string) (measure.Test, error) {
	const ownJSON = "a sweep of rr tests stores each run's JSON itself: give no -J, --logfile or --load"
	if _, ok := commandLineOnly(args, "logfile"); ok {
		return measure.Test{}, errors.New(ownJSON)
	}
	t, err := parsePoint(measure.KindRR, args, func(t measure.Test, _ *pflag.FlagSet) error {
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

func clientPoint(s *Spec, args []string) (measure.Test, error) {
	const ownJSON = "a sweep stores each run's JSON itself: give no -J, --json-stream or --logfile"
	if _, ok := commandLineOnly(args, "save", "db"); ok {
		return measure.Test{}, errors.New("a sweep stores every run in its own --db: give no --save or --db among a run's flags")
	}
	if _, ok := commandLineOnly(args, "logfile"); ok {
		return measure.Test{}, errors.New(ownJSON)
	}
	t, err := parsePoint(measure.KindClient, args, func(t measure.Test, fs *pflag.FlagSet) error {
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
