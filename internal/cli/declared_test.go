package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/group"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/mesh"
	"github.com/wireperf/wireperf/internal/spec"
)

// declaredSample is a value each declared client flag takes on its own.
var declaredSample = map[string]string{
	"time": "3", "bytes": "1M", "interval": "2", "omit": "1", "parallel": "2", "bitrate": "10m", "pps": "100",
	"spacing": "10us", "late-threshold": "3s", "window": "64K", "length": "1400", "set-mss": "1300",
	"congestion": "cubic", "tos": "0x10", "dscp": "EF", "bind": "127.0.0.1", "cport": "5300", "blockcount": "10",
	"fq-rate": "10m", "flowlabel": "1", "rcv-timeout": "5000", "snd-timeout": "5000", "title": "declared", "format": "m",
	"retry-busy": "5s", "tcpinfo-interval": "100ms", "bottleneck": "10m", "connect-timeout": "5s", "extra-data": "site-3",
	"tls-pin": strings.Repeat("ab", 32), "isochronous": "60:20m,5m", "ipg": "0.05",
}

// companions are what the client flags that apply only beside another
// are given with (--rcv-timeout with -R, the UDP flags with -u).
var companions = map[string][]string{
	"pps": {"-u"}, "spacing": {"-u"}, "spin": {"-u", "--spacing=10us"}, "no-gso": {"-u"},
	"late-threshold": {"-u"}, "dont-fragment": {"-u"}, "rcv-timeout": {"-R"},
	"isochronous": {"-u"}, "ipg": {"-u", "--isochronous"},
}

// groupOwn are group's flags that share a client flag's name with a
// meaning of their own (they say how to reach the agents, or the report's
// units): not test flags.
var groupOwn = map[string]bool{"port": true, "connect-timeout": true, "format": true, "file": true}

// sweepOwn are the sweep's flags that name a client flag: -u, -R and
// --bidir set the proto and direction axes, and -p, --count are the
// sweep's own settings.
var sweepOwn = map[string]bool{"udp": true, "reverse": true, "bidir": true, "port": true}

// TestEntriesTakeTheDeclaredFlags drives the four ways a test enters
// from the one declaration (package testflags): `wireperf group`, `sweep`
// (a campaign's axis, and any flag after --), a mesh file's test and
// `task add` (the API's task) accept a declared client flag exactly when
// the client's own command line does, and give the test the same spec;
// a flag refused in a test line is refused by a mesh file and a task,
// and group and sweep have it only as a flag of their own.
func TestEntriesTakeTheDeclaredFlags(t *testing.T) {
	base := clientSpec(t, nil)
	for _, d := range testflags.Of("client") {
		args := []string{"--" + d.Name}
		if d.Kind != testflags.Bool {
			v, ok := declaredSample[d.Name]
			if !ok {
				t.Errorf("--%s: no sample value: add one to declaredSample", d.Name)
				continue
			}
			args[0] += "=" + v
		}
		if d.Name == "tls-pin" {
			continue // the CLI's (authflags), not the model's: how to trust the server, which a test line may name
		}
		args = append(args, companions[d.Name]...)
		t.Run(d.Name, func(t *testing.T) {
			fs := measure.NewFlagSet("client")
			ref, err := measure.New(measure.KindClient, fs)
			if err != nil {
				t.Fatal(err)
			}
			refErr := fs.Parse(args)
			if refErr == nil {
				refErr = ref.Finish(fs)
			}
			if refErr != nil {
				t.Fatalf("client %v: %v (a sample must be a value the client takes alone)", args, refErr)
			}
			same := func(entry string, s spec.Spec, err error) {
				t.Helper()
				if (err == nil) != (refErr == nil) {
					t.Errorf("%s %v: error %v, the client's %v", entry, args, err, refErr)
					return
				}
				if err == nil {
					sameChange(t, entry, base, ref.Client.Spec, s)
				}
			}
			line := "client " + strings.Join(args, " ")
			// task add and the API.
			task, err := daemon.TaskJSON{Name: "n", Source: "a", Dest: "b", Test: line, Reserve: "30s"}.Task()
			if err == nil {
				err = task.Validate()
			}
			var taskSpec spec.Spec
			if err == nil {
				m, _ := task.Test()
				taskSpec = m.Client.Spec
			}
			same("task add", taskSpec, err)
			// A mesh file's test.
			ms, err := meshTest(line)
			same("mesh", ms, err)
			// wireperf group.
			gfs := pflag.NewFlagSet("group", pflag.ContinueOnError)
			gf := group.NewFlags()
			gf.Register(gfs)
			switch {
			case d.Group:
				err := gfs.Parse(args)
				var s spec.Spec
				if err == nil {
					s, err = gf.Options.Spec()
				}
				same("group", s, err)
			case gfs.Lookup(d.Name) != nil && !groupOwn[d.Name]:
				t.Errorf("group has --%s, not declared a group flag", d.Name)
			}
			// wireperf sweep: an axis of one value.
			sfs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
			sf := campaign.NewFlags()
			sf.Register(sfs)
			switch {
			case d.Axis:
				if f := sfs.Lookup(d.Name); f == nil || f.Shorthand != d.Short {
					t.Fatalf("sweep --%s: %+v, want the client's shorthand %q", d.Name, f, d.Short)
				}
				s, err := sweepPoint(sfs, sf, args)
				same("sweep", s, err)
			case sfs.Lookup(d.Name) != nil && !sweepOwn[d.Name]:
				t.Errorf("sweep has --%s, not declared an axis", d.Name)
			}
			// Any client flag after -- is a point's fixed flag.
			sfs = pflag.NewFlagSet("sweep", pflag.ContinueOnError)
			sf = campaign.NewFlags()
			sf.Register(sfs)
			s, err := sweepPoint(sfs, sf, append([]string{"--"}, args...))
			same("sweep --", s, err)
		})
	}
	for _, name := range []string{"json", "logfile", "tcpinfo-csv", "affinity", "xbind", "cntl-ka", "get-server-output", "save", "db"} {
		why, ok := testflags.Refused(name)
		if !ok {
			t.Errorf("--%s: not refused", name)
			continue
		}
		line := "client --" + name + "=x"
		if _, err := (daemon.TaskJSON{Name: "n", Source: "a", Dest: "b", Test: line, Reserve: "30s"}).Task(); err == nil {
			if task, _ := (daemon.TaskJSON{Name: "n", Source: "a", Dest: "b", Test: line, Reserve: "30s"}).Task(); task.Validate() == nil {
				t.Errorf("task add %s: accepted", line)
			}
		}
		if _, err := meshTest(line); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("mesh %s: %v, want %q", line, err, why)
		}
	}
}

// clientSpec is the client command line's spec for args.
func clientSpec(t *testing.T, args []string) spec.Spec {
	t.Helper()
	m, _, err := measure.Parse(measure.KindClient, args)
	if err != nil {
		t.Fatal(err)
	}
	return m.Client.Spec
}

// sameChange fails unless got changed every field of the spec that the
// client's flag changed (want against base), to the same value.
func sameChange(t *testing.T, entry string, base, want, got spec.Spec) {
	t.Helper()
	b, w, g := reflect.ValueOf(base), reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range b.NumField() {
		if reflect.DeepEqual(b.Field(i).Interface(), w.Field(i).Interface()) {
			continue
		}
		if !reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()) {
			t.Errorf("%s: %s = %v, the client's %v", entry, b.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
}

// meshTest is the spec of a mesh file's one test, line.
func meshTest(line string) (spec.Spec, error) {
	src := fmt.Sprintf(`name: m
hosts:
  a: {addr: 192.0.2.1}
  b: {addr: 192.0.2.2}
groups:
  g:
    mesh: [a, b]
tests:
  t:
    test: %s
    reserve: 30s
schedules:
  - group: g
    test: t
    repeat: 1h
`, line)
	m, err := mesh.Parse("m.yaml", []byte(src))
	if err != nil {
		return spec.Spec{}, err
	}
	tasks := m.Tasks()
	if len(tasks) == 0 {
		return spec.Spec{}, fmt.Errorf("no tasks")
	}
	test, err := tasks[0].Test()
	if err != nil {
		return spec.Spec{}, err
	}
	return test.Client.Spec, nil
}

// sweepPoint is the spec of the first point of a sweep with args.
func sweepPoint(fs *pflag.FlagSet, f *campaign.Flags, args []string) (spec.Spec, error) {
	full := append([]string{"--name", "n", "h"}, args...)
	if err := fs.Parse(full); err != nil {
		return spec.Spec{}, err
	}
	dash := fs.ArgsLenAtDash()
	s, err := f.Spec(fs, fs.Args(), dash)
	if err != nil {
		return spec.Spec{}, err
	}
	pts := s.Points()
	if len(pts) == 0 {
		return spec.Spec{}, fmt.Errorf("no points")
	}
	m, err := campaign.PointTest(s, pts[0])
	if err != nil {
		return spec.Spec{}, err
	}
	return m.Client.Spec, nil
}
