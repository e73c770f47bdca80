package mesh

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

func TestExampleMesh(t *testing.T) {
	data, err := os.ReadFile("../../examples/mesh-3hosts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse("mesh-3hosts.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "lab-mesh" {
		t.Fatal(m.Name)
	}
	if got := len(m.Pairs("all")); got != 6 {
		t.Fatalf("a mesh of 3 hosts has %d ordered pairs, want 6", got)
	}
	star := fmt.Sprint(m.Pairs("from-ams"))
	if star != "[{ams fra} {fra ams} {ams lon} {lon ams}]" {
		t.Fatalf("star: %s", star)
	}
	tasks := m.Tasks()
	if len(tasks) != 10 {
		t.Fatalf("%d tasks, want 6 + 4", len(tasks))
	}
	ids := map[string]bool{}
	for _, tk := range tasks {
		if err := tk.Validate(); err != nil {
			t.Fatalf("%s: %v", tk.ID, err)
		}
		ids[tk.ID] = true
		if tk.Name == "tput" && (tk.Duration != 12*time.Second || tk.Class != schedule.Exclusive || tk.Thresholds.GoodputRedBps != 100e6) {
			t.Fatalf("tput task %+v", tk)
		}
		// Each task keeps its schedule's group, which the grid groups by.
		if want := map[string]string{"tput": "all", "latency": "from-ams"}[tk.Name]; tk.Group != want {
			t.Fatalf("%s task's group %q, want %q", tk.Name, tk.Group, want)
		}
		if tk.Dest == "lon" && tk.DestAddr != "192.0.2.30:5202" {
			t.Fatalf("lon's endpoint %s", tk.DestAddr)
		}
	}
	if len(ids) != 10 {
		t.Fatal("task IDs collide")
	}
	// The 6 exclusive runs of a 30 min schedule are 5 min apart; the
	// background probes all start on the period.
	offsets := map[time.Duration]bool{}
	for _, tk := range tasks {
		off := tk.Start.Sub(time.Unix(0, 0))
		if tk.Name == "latency" && off != 0 {
			t.Fatalf("a background task starts at +%v", off)
		}
		if tk.Name == "tput" {
			offsets[off] = true
		}
	}
	for i := 0; i < 6; i++ {
		if !offsets[time.Duration(i)*5*time.Minute] {
			t.Fatalf("exclusive offsets %v, want 0, 5m … 25m", offsets)
		}
	}
	// Expanding again gives the same tasks.
	m2, _ := Parse("mesh-3hosts.yaml", data)
	if !reflect.DeepEqual(m2.Tasks(), tasks) {
		t.Fatal("expansion is not a function of the file")
	}
}

func TestGroupReferences(t *testing.T) {
	src := `hosts: {a: , b: , c: , d: }
groups:
  left: {mesh: [a, b]}
  both: {mesh: [left, c]}
  p: {pairs: [[a, d], [d, a]]}
tests:
  t: {test: client -t 1}
schedules:
  - {group: both, test: t, repeat: 10s}
`
	m, err := Parse("g.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Pairs("both")); n != 6 {
		t.Fatalf("a mesh of a group of 2 and a host: %d pairs", n)
	}
	if fmt.Sprint(m.Pairs("p")) != "[{a d} {d a}]" {
		t.Fatal(m.Pairs("p"))
	}
}

func TestBadInput(t *testing.T) {
	base := func(groups, tests, scheds string) string {
		return "hosts:\n  a: {addr: 10.0.0.1}\n  b:\n" + groups + tests + scheds
	}
	goodTests := "tests:\n  t: {test: client -t 5}\n"
	cases := []struct {
		name, src string
		line, col int // col 0: the decoder says a line only
		key, msg  string
	}{
		{"unknown host", base("groups:\n  g: {mesh: [a, zz]}\n", goodTests, ""), 5, 13, "groups.g", `unknown host or group "zz"`},
		{"cycle", base("groups:\n  x: {mesh: [a, y]}\n  y: {mesh: [b, x]}\n", goodTests, ""), 6, 13, "groups.y", "cycle of group references: x → y → x"},
		{"test line", base("groups:\n  g: {mesh: [a, b]}\n", "tests:\n  t: {test: clinet -t 5}\n", ""), 7, 13, "tests.t.test", `"clinet"`},
		{"test flag", base("groups:\n  g: {mesh: [a, b]}\n", "tests:\n  t: {test: client -t five}\n", ""), 7, 13, "tests.t.test", "five"},
		{"test value", base("groups:\n  g: {mesh: [a, b]}\n", "tests:\n  t: {test: client -l 0}\n", ""), 7, 13, "tests.t.test", "-l 0: want 1 byte to"},
		{"test length", base("groups:\n  g: {mesh: [a, b]}\n", "tests:\n  t: {test: client -n 1G}\n", ""), 7, 13, "tests.t.test", "give reserve"},
		{"unknown key", base("groups:\n  g: {mesh: [a, b]}\n", "tests:\n  t: {test: client, colour: red}\n", ""), 7, 21, "tests.t", `unknown key "colour" (known: test, class, reserve, thresholds)`},
		{"schedule group", base("", goodTests, "schedules:\n  - {group: nope, test: t}\n"), 7, 13, "schedules[0].group", "unknown group"},
		{"repeat", base("groups:\n  g: {mesh: [a, b]}\n", goodTests, "schedules:\n  - group: g\n    test: t\n    repeat: 3s\n"), 11, 13, "schedules[0].repeat", "shorter than one run"},
		{"duration", base("groups:\n  g: {mesh: [a, b]}\n", goodTests, "schedules:\n  - group: g\n    test: t\n    slip: soon\n"), 11, 11, "schedules[0].slip", "want a duration"},
		{"port", "hosts:\n  a: {port: 70000}\n", 2, 13, "hosts.a.port", "want 1 to 65535"},
		{"yaml", "hosts:\n  a: [\n", 2, 0, "", "did not find"},
		{"random slip", base("groups:\n  g: {mesh: [a, b]}\n", goodTests, "schedules:\n  - group: g\n    test: t\n    repeat: 10s\n    random_slip: 10s\n"), 12, 18, "schedules[0].random_slip", "not shorter than repeat"},
		{"pairs", base("groups:\n  g: {pairs: [[a, b, a]]}\n", goodTests, ""), 5, 15, "groups.g.pairs", "[SOURCE, DEST]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte(c.src))
			var e *yamlfile.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v: not a *yamlfile.Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Fatalf("more than one line: %q", msg)
			}
			if e.File != "m.yaml" || e.Line != c.line || e.Key != c.key || !strings.Contains(e.Msg, c.msg) {
				t.Fatalf("got %q (line %d, key %q), want line %d, key %q, %q", msg, e.Line, e.Key, c.line, c.key, c.msg)
			}
			at := fmt.Sprintf("m.yaml:%d:%d: ", c.line, c.col)
			if c.col == 0 {
				at = fmt.Sprintf("m.yaml:%d: ", c.line)
			}
			if e.Column != c.col || !strings.HasPrefix(msg, at) {
				t.Fatalf("%q does not start with %q", msg, at)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("../../examples/mesh-3hosts.yaml")
	f.Add(data)
	f.Add([]byte("hosts: {a: , b: }\ngroups: {x: {mesh: [x]}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse("f.yaml", b)
		if err != nil {
			var e *yamlfile.Error
			if !errors.As(err, &e) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not a one-line mesh error: %q", err)
			}
			return
		}
		for _, tk := range m.Tasks() {
			if err := tk.Validate(); err != nil {
				t.Fatalf("an accepted file gives an invalid task: %v", err)
			}
		}
	})
}

// Goodput thresholds are rates as -b reads them: "500M" is 500e6 bit/s,
// not 500 × 2^20.
func TestThresholdRatesAreDecimal(t *testing.T) {
	const file = `name: m
hosts:
  a: {addr: 127.0.0.1}
  b: {addr: 127.0.0.2}
groups:
  ab:
    mesh: [a, b]
tests:
  tput:
    test: client -t 5
    class: exclusive
    thresholds: {goodput_amber: 1G, goodput_red: 500M}
schedules:
  - group: ab
    test: tput
    repeat: 30m
`
	m, err := Parse("m.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	tasks := m.Tasks()
	if len(tasks) == 0 {
		t.Fatal("no tasks")
	}
	for _, tk := range tasks {
		if tk.Thresholds.GoodputAmberBps != 1e9 || tk.Thresholds.GoodputRedBps != 500e6 {
			t.Errorf("%s: goodput thresholds %v and %v; want 1e9 and 500e6", tk.ID, tk.Thresholds.GoodputAmberBps, tk.Thresholds.GoodputRedBps)
		}
	}
}

// A trace test is a background test unless its class says otherwise,
// and its reservation is its bound: every hop waiting its timeout.
func TestTraceTest(t *testing.T) {
	file := `
hosts: {a: {addr: 10.0.0.1}, b: {addr: 10.0.0.2}}
groups: {g: {mesh: [a, b]}}
tests:
  path: {test: trace --max-hops 10 --probes 2 --proto icmp}
  pinned: {test: trace, class: exclusive}
schedules:
  - {group: g, test: path, repeat: 5m}
  - {group: g, test: pinned, repeat: 5m}
`
	m, err := Parse("m.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if tt := m.Tests["path"]; tt.Class != schedule.Background || tt.Reserve != 10*time.Second+schedule.ReserveMargin {
		t.Fatalf("path: class %s, reserve %v", tt.Class, tt.Reserve)
	}
	if tt := m.Tests["pinned"]; tt.Class != schedule.Exclusive {
		t.Fatalf("pinned: class %s", tt.Class)
	}
	if _, err := Parse("m.yaml", []byte(strings.Replace(file, "--proto icmp", "--proto tcp", 1))); err == nil || !strings.Contains(err.Error(), "--proto") {
		t.Fatalf("--proto tcp: %v", err)
	}
}
