package campaign

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/spec"
)

// A point's test is read by the client's model: -O runs before -t, the
// axes set the flags, and the run's length is the model's.
func TestPointTestIsTheClientsTest(t *testing.T) {
	s := &Spec{Name: "g", Targets: []string{"h"}, Repeat: 1, Order: OrderSequential, Port: 5301, Fixed: []string{"-O", "2", "-C", "cubic"},
		Axes: []AxisValues{{AxisWindow, mustList(t, AxisWindow, "64K,1M")}, {AxisTime, mustList(t, AxisTime, "2,20")}}}
	runs := s.Plan()
	tests, err := Tests(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 4 {
		t.Fatalf("%d tests for 4 points", len(tests))
	}
	length := Length(tests)
	for _, r := range runs {
		c := tests[r.Point.Key()].Client
		w, _ := r.Point.Value(AxisWindow)
		tm, _ := r.Point.Value(AxisTime)
		want := time.Duration(*tm.Num*float64(time.Second)) + 2*time.Second
		if c.Spec.Window != int64(*w.Num) || c.Spec.Duration != want || c.Spec.Congestion != "cubic" || c.Port != 5301 || !c.Spec.HostCounters {
			t.Errorf("%s: %+v", r.Point.Label(), c.Spec)
		}
		if length(r) != want {
			t.Errorf("%s: length %v, want %v", r.Point.Label(), length(r), want)
		}
		if cl := Cmdline(s, r.Point); !strings.HasPrefix(cl, "wireperf client h ") || !strings.HasSuffix(cl, " --port=5301") {
			t.Errorf("command line %q", cl)
		}
	}
}

// An rr point takes the length axis as its request size and proto as its
// mode; its length is its sizes × -t, and its command line says rr.
func TestPointTestRR(t *testing.T) {
	s := &Spec{Name: "r", Test: TestRR, Targets: []string{"h"}, Repeat: 1, Order: OrderSequential, Fixed: []string{"-t", "3"},
		Axes: []AxisValues{{AxisLength, mustList(t, AxisLength, "64,1472")}, {AxisProto, mustList(t, AxisProto, "udp,tcp")}}}
	runs := s.Plan()
	tests, err := Tests(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		rr := tests[r.Point.Key()].RR
		l, _ := r.Point.Value(AxisLength)
		p, _ := r.Point.Value(AxisProto)
		wantMode := map[string]string{"udp": spec.RRUDP, "tcp": spec.RRTCP}[p.Label]
		if rr == nil || rr.Spec.RRSizes != strings.TrimSuffix(strings.TrimSuffix(l.Label, "B"), " ") || rr.Spec.RRMode != wantMode {
			t.Fatalf("%s: %+v", r.Point.Label(), rr)
		}
		if d := Length(tests)(r); d != 3*time.Second {
			t.Errorf("%s: length %v", r.Point.Label(), d)
		}
		if cl := Cmdline(s, r.Point); !strings.HasPrefix(cl, "wireperf rr h ") {
			t.Errorf("command line %q", cl)
		}
	}
}

// What a sweep sets itself, or what doesn't apply, is refused with the
// one-line reasons of before.
func TestPointTestRefuses(t *testing.T) {
	for fixed, want := range map[string]string{
		"--save":        "a sweep stores every run in its own --db",
		"--db=x.db":     "a sweep stores every run in its own --db",
		"-J":            "a sweep stores each run's JSON itself",
		"--logfile=x":   "a sweep stores each run's JSON itself",
		"-l 0":          "-l 0: want 1 byte",
		"--nosuch":      "unknown flag: --nosuch",
		"-R -t 2 extra": "unexpected arguments",
	} {
		s := &Spec{Name: "x", Targets: []string{"h"}, Repeat: 1, Order: OrderSequential, Fixed: strings.Fields(fixed)}
		_, err := Tests(s, s.Plan())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", fixed, err, want)
		}
	}
	rr := &Spec{Name: "x", Test: TestRR, Targets: []string{"h"}, Repeat: 1, Order: OrderSequential, Fixed: []string{"--reverse"}}
	if _, err := Tests(rr, rr.Plan()); err == nil || !strings.Contains(err.Error(), "does not apply to request-response tests") {
		t.Errorf("rr --reverse: %v", err)
	}
}

// A point's test, its axis values set on the parsed fixed flags, is the
// test its command line (Cmdline's flags, as argv) gives the command, or
// fails as that line does.
func TestPointTestIsItsCommandLine(t *testing.T) {
	rate := 1073741824.0
	specs := []*Spec{
		{Port: 5301, Fixed: []string{"-O", "1", "-C", "cubic"}, Axes: []AxisValues{
			{AxisWindow, mustList(t, AxisWindow, "64K,1M")}, {AxisDirection, mustList(t, AxisDirection, "up,down,bidir")}, {AxisProto, mustList(t, AxisProto, "tcp,udp")}}},
		{Fixed: []string{"-u", "-t", "2"}, Axes: []AxisValues{
			{AxisBitrate, []Value{{Label: "1G", Num: &rate, Arg: "1073741824"}, {Label: "300m"}}}, {AxisLength, mustList(t, AxisLength, "1200")}, {AxisSpacing, mustList(t, AxisSpacing, "10us")}}},
		{Fixed: []string{"-P", "2"}, Axes: []AxisValues{{AxisParallel, mustList(t, AxisParallel, "1,4")}, {AxisSetMSS, mustList(t, AxisSetMSS, "1200")}, {AxisTime, mustList(t, AxisTime, "3")}}},
		{Test: TestRR, Port: 6000, Fixed: []string{"-t", "3"}, Axes: []AxisValues{
			{AxisLength, mustList(t, AxisLength, "64,1472")}, {AxisProto, mustList(t, AxisProto, "udp,tcp")}, {AxisWindow, mustList(t, AxisWindow, "1M")}}},
		{Test: TestRR, Axes: []AxisValues{{AxisParallel, mustList(t, AxisParallel, "2")}}},
		{Fixed: []string{"-b", "1m/4"}, Axes: []AxisValues{{AxisTime, mustList(t, AxisTime, "1")}}},
	}
	for i, s := range specs {
		s.Name, s.Targets, s.Repeat, s.Order = "c", []string{"h"}, 1, OrderSequential
		for _, r := range s.Plan() {
			got, gotErr := PointTest(s, r.Point)
			kind, args, err := pointArgs(s, r.Point)
			if err != nil {
				t.Fatal(err)
			}
			if s.Port != 0 {
				args = append([]string{fmt.Sprintf("--port=%d", s.Port)}, args...)
			}
			want, _, wantErr := measure.Parse(kind, args)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("spec %d %s: error %v, its command line's %v", i, r.Point.Label(), gotErr, wantErr)
				continue
			}
			if wantErr != nil {
				continue
			}
			if want.Client != nil {
				want.Client.Spec.HostCounters = true
			} else {
				want.RR.Spec.HostCounters = true
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("spec %d %s: %+v %+v, its command line's %+v %+v", i, r.Point.Label(), got.Client, got.RR, want.Client, want.RR)
			}
		}
	}
}
