package psconfig_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/mesh"
	"github.com/wireperf/wireperf/internal/psconfig"
)

// realTemplates are perfSONAR's own examples (testdata/perfsonar/README.md)
// that carry at least one test wireperf runs.
var realTemplates = []string{"example-1-simple", "example-2-testbed", "example-3-circuits", "example-5-classes"}

func read(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "perfsonar", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRealTemplatesRoundTrip: each real template's mesh file is read back
// by the mesh parser, fits its hosts, and tests exactly the pairs, tests
// and repeats the template's tasks name, by the template's own reading
// (expected, below: written apart from the importer).
func TestRealTemplatesRoundTrip(t *testing.T) {
	for _, name := range realTemplates {
		t.Run(name, func(t *testing.T) {
			data := read(t, name)
			imp, err := psconfig.Convert(name, data)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mesh.Parse(name+".yaml", imp.YAML)
			if err != nil {
				t.Fatalf("the mesh file is refused: %v\n%s", err, imp.YAML)
			}
			if _, overfull := m.CheckUtilisation(); overfull != nil {
				t.Errorf("over-full: %v", overfull)
			}
			got := map[string]bool{}
			for _, tk := range m.Tasks() {
				src := m.Hosts[tk.Source].Addr
				for _, d := range tk.DestHosts() {
					got[src+" → "+m.Hosts[d].Addr+" "+tk.Name+" every "+tk.Repeat.String()] = true
				}
			}
			want := expected(t, data)
			for k := range want {
				if !got[k] {
					t.Errorf("missing: %s", k)
				}
			}
			for k := range got {
				if !want[k] {
					t.Errorf("not in the template: %s", k)
				}
			}
			if len(want) == 0 {
				t.Fatal("the template gave no pair")
			}
		})
	}
}

// expected reads a template the simple way, for the forms perfSONAR's
// examples use: mesh and disjoint groups of addresses by name or by a tag
// class, every ordered pair of two enabled addresses, tasks not disabled
// whose test type wireperf runs, with the schedule's repeat (5 minutes
// for latencybg without one).
func expected(t *testing.T, data []byte) map[string]bool {
	type selector struct{ Name, Class, Label string }
	var tpl struct {
		Addresses map[string]struct {
			Address  string   `json:"address"`
			Disabled bool     `json:"disabled"`
			Tags     []string `json:"tags"`
		} `json:"addresses"`
		Classes map[string]struct {
			Match struct{ Tag string } `json:"match-filter"`
		} `json:"address-classes"`
		Groups map[string]struct {
			Type           string     `json:"type"`
			Addresses      []selector `json:"addresses"`
			A              []selector `json:"a-addresses"`
			B              []selector `json:"b-addresses"`
			Unidirectional bool       `json:"unidirectional"`
		} `json:"groups"`
		Tests map[string]struct {
			Type string `json:"type"`
		} `json:"tests"`
		Schedules map[string]struct {
			Repeat string `json:"repeat"`
		} `json:"schedules"`
		Tasks map[string]struct {
			Group, Test, Schedule string
			Disabled              bool
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &tpl); err != nil {
		t.Fatal(err)
	}
	resolve := func(sels []selector) []string {
		var out []string
		for _, sel := range sels {
			if sel.Label != "" {
				t.Fatalf("the reference reads no labels")
			}
			if sel.Class == "" {
				out = append(out, sel.Name)
				continue
			}
			for n, a := range tpl.Addresses {
				if slices.Contains(a.Tags, tpl.Classes[sel.Class].Match.Tag) {
					out = append(out, n)
				}
			}
		}
		return out
	}
	out := map[string]bool{}
	for _, task := range tpl.Tasks {
		g := tpl.Groups[task.Group]
		kind := tpl.Tests[task.Test].Type
		if task.Disabled || !slices.Contains([]string{"throughput", "rtt", "latencybg", "latency", "trace"}, kind) {
			continue
		}
		var pairs [][2]string
		switch g.Type {
		case "mesh":
			members := resolve(g.Addresses)
			for _, a := range members {
				for _, b := range members {
					pairs = append(pairs, [2]string{a, b})
				}
			}
		case "disjoint":
			as, bs := resolve(g.A), resolve(g.B)
			for _, a := range as {
				for _, b := range bs {
					pairs = append(pairs, [2]string{a, b})
					if !g.Unidirectional {
						pairs = append(pairs, [2]string{b, a})
					}
				}
			}
		default:
			t.Fatalf("group %s: the reference reads mesh and disjoint groups only", task.Group)
		}
		repeat := 5 * time.Minute
		if task.Schedule != "" {
			d, err := psconfig.ParseDuration(tpl.Schedules[task.Schedule].Repeat)
			if err != nil {
				t.Fatal(err)
			}
			repeat = d
		}
		for _, p := range pairs {
			aa, aok := tpl.Addresses[p[0]]
			bb, bok := tpl.Addresses[p[1]]
			if p[0] == p[1] || !aok || !bok || aa.Disabled || bb.Disabled {
				continue
			}
			out[aa.Address+" → "+bb.Address+" "+task.Test+" every "+repeat.String()] = true
		}
	}
	return out
}

// TestEveryKeyLeftBehindIsNamed: each key of a real template that the
// mesh doesn't carry is named by a warning.
func TestEveryKeyLeftBehindIsNamed(t *testing.T) {
	imp, err := psconfig.Convert("t", read(t, "example-2-testbed"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(imp.Warnings, "\n")
	for _, key := range []string{"archives (top level)", "hosts (top level)", "tasks.*.archives", "tasks.*.tools", "tasks.*._meta",
		"addresses.*._meta", "addresses.*.disabled", `latencybg spec "bucket-width"`, "disabled tasks", "continuous tests"} {
		if !strings.Contains(all, key) {
			t.Errorf("no warning names %s; warnings:\n%s", key, all)
		}
	}
	for _, w := range imp.Warnings {
		if strings.Contains(w, "\n") {
			t.Errorf("a warning of more than one line: %q", w)
		}
	}
}

// minimal is a template with one throughput test over a mesh of two, its
// spec and the rest open to each case.
func minimal(spec, extra string) string {
	return `{"addresses": {"a": {"address": "192.0.2.1"}, "b": {"address": "b.example.net"}` + extra + `},
 "groups": {"g": {"type": "mesh", "addresses": [{"name": "a"}, {"name": "b"}]}},
 "tests": {"t": {"type": "throughput", "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}"` + spec + `}}},
 "schedules": {"s": {"repeat": "PT1H"}},
 "tasks": {"k": {"group": "g", "test": "t", "schedule": "s"}}}`
}

// TestHostileTemplates: what a template could use to run something other
// than a test (a flag smuggled into a value), or to cost unbounded time or
// memory, is refused or left out, and never reaches a test line.
func TestHostileTemplates(t *testing.T) {
	deep := strings.Repeat(`{"x":`, 40) + "1" + strings.Repeat("}", 40)
	cases := []struct {
		name, template, wantErr string
	}{
		{"flag in congestion", minimal(`, "congestion": "cubic -F /etc/shadow"`, ""), "congestion"},
		{"flag as address", minimal("", `, "c": {"address": "-F"}`), ""},
		{"space in address", minimal("", `, "c": {"address": "a.example.net --logfile x"}`), ""},
		{"jq template as dest", minimal(`, "dest2": 1`, ""), ""},
		{"unknown template", strings.Replace(minimal("", ""), `{% address[1] %}`, `{% jq .foo %}`, 1), "only {% address[0] %}"},
		{"duplicate key", `{"addresses": {}, "addresses": {}}`, "twice"},
		{"deep", `{"addresses": ` + deep + `}`, "deeper"},
		{"too large", `{"x": "` + strings.Repeat("a", psconfig.MaxFileSize) + `"}`, "over the limit"},
		{"trailing data", minimal("", "") + `{}`, "after"},
		{"not an object", `[1, 2]`, "JSON object"},
		{"huge parallel", minimal(`, "parallel": 100000`, ""), "parallel"},
		{"fractional parallel", minimal(`, "parallel": 2.5`, ""), "whole"},
		{"bad duration", minimal(`, "duration": "30 seconds"`, ""), "ISO 8601"},
		{"year duration", minimal(`, "duration": "P1Y"`, ""), "ISO 8601"},
		{"no tasks", `{"addresses": {"a": {"address": "a"}}, "groups": {}, "tests": {}, "tasks": {}}`, "no groups"},
		{"control character in a name", strings.Replace(minimal("", ""), `"g"`, `"g\u0007"`, 1), "no task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			imp, err := psconfig.Convert("hostile", []byte(c.template))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if _, err := mesh.Parse("hostile.yaml", imp.YAML); err != nil {
				t.Fatalf("the mesh file is refused: %v\n%s", err, imp.YAML)
			}
			for _, bad := range []string{"-F", "--logfile", "shadow"} {
				if strings.Contains(string(imp.YAML), bad) {
					t.Errorf("%q reached the mesh file:\n%s", bad, imp.YAML)
				}
			}
		})
	}
}

// TestThroughputSpecFields: each throughput field pScheduler passes to
// iperf3 becomes the client flag of the same meaning, read back by the
// mesh's own test-line check.
func TestThroughputSpecFields(t *testing.T) {
	for spec, want := range map[string]string{
		`, "duration": "PT30S", "interval": "PT2S", "parallel": 4, "udp": true, "bandwidth": 500000000, "burst-size": 8,
 "window-size": 4194304, "buffer-length": 1400, "reverse": true, "ip-tos": 32, "ip-version": 4, "flow-label": 7`: "client -t 30 -i 2 -P 4 -u -b 500000000/8 -w 4194304 -l 1400 -R -S 32 -4",
		`, "duration": "PT1M", "parallel": 2, "mss": 1400, "omit": "PT5S", "congestion": "bbr", "ip-version": 6, "flow-label": 7,
 "fq-rate": 900000000, "no-delay": true, "zero-copy": true, "dscp": 10`: "client -t 60 -P 2 -M 1400 -O 5 -C bbr --dscp 10 -6 -Z -L 7 --fq-rate 900000000 -N",
	} {
		imp, err := psconfig.Convert("fields", []byte(minimal(spec, "")))
		if err != nil {
			t.Fatal(err)
		}
		m, err := mesh.Parse("fields.yaml", imp.YAML)
		if err != nil {
			t.Fatalf("%v\n%s", err, imp.YAML)
		}
		if got := strings.Join(m.Tests["t"].Args, " "); got != want {
			t.Errorf("test line\n got %s\nwant %s", got, want)
		}
	}
}

// TestGroupsAndSchedules: disjoint groups both ways or one, a mesh's
// excludes, a list group to a host named outright, and a schedule's
// fields.
func TestGroupsAndSchedules(t *testing.T) {
	tpl := `{"addresses": {"a": {"address": "10.0.0.1"}, "b": {"address": "10.0.0.2"}, "c": {"address": "10.0.0.3"},
   "d": {"address": "10.0.0.4", "labels": {"v6": {"address": "2001:db8::4"}}}},
 "groups": {
   "dj": {"type": "disjoint", "a-addresses": [{"name": "a"}], "b-addresses": [{"name": "b"}, {"name": "c"}]},
   "uni": {"type": "disjoint", "unidirectional": true, "a-addresses": [{"name": "a"}], "b-addresses": [{"name": "b"}, {"name": "c"}]},
   "mx": {"type": "mesh", "addresses": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
          "excludes": [{"local-address": {"name": "a"}, "target-addresses": [{"name": "b"}]}]},
   "lst": {"type": "list", "addresses": [{"name": "a"}, {"name": "b"}]},
   "six": {"type": "mesh", "default-address-label": "v6", "addresses": [{"name": "a"}, {"name": "d"}]}},
 "tests": {"tp": {"type": "throughput", "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}", "duration": "PT10S"}},
   "rev": {"type": "throughput", "spec": {"source": "{% address[1] %}", "dest": "{% address[0] %}"}},
   "tr": {"type": "trace", "spec": {"dest": "198.51.100.7", "source": "{% address[0] %}", "hops": 20, "queries": 2, "first-ttl": 3}}},
 "schedules": {"s": {"repeat": "PT30M", "slip": "PT5M", "start": "2026-01-01T00:00:00Z", "until": "2027-01-01T00:00:00Z", "max-runs": 9},
   "rel": {"repeat": "PT1H", "start": "@R/PT1H"}},
 "tasks": {"t1": {"group": "dj", "test": "tp", "schedule": "s"}, "t2": {"group": "uni", "test": "tp", "schedule": "rel"},
   "t3": {"group": "mx", "test": "tp", "schedule": "rel"}, "t4": {"group": "lst", "test": "tr", "schedule": "rel"},
   "t5": {"group": "uni", "test": "rev", "schedule": "rel"}, "t6": {"group": "six", "test": "tp", "schedule": "rel"}}}`
	imp, err := psconfig.Convert("groups", []byte(tpl))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mesh.Parse("groups.yaml", imp.YAML)
	if err != nil {
		t.Fatalf("%v\n%s", err, imp.YAML)
	}
	pairs := func(group string) string {
		var out []string
		for _, p := range m.Pairs(group) {
			out = append(out, m.Hosts[p.Source].Addr+">"+m.Hosts[p.Dest].Addr)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for group, want := range map[string]string{
		"dj":           "10.0.0.1>10.0.0.2 10.0.0.1>10.0.0.3 10.0.0.2>10.0.0.1 10.0.0.3>10.0.0.1",
		"uni":          "10.0.0.1>10.0.0.2 10.0.0.1>10.0.0.3",
		"uni-reversed": "10.0.0.2>10.0.0.1 10.0.0.3>10.0.0.1",
		"mx":           "10.0.0.1>10.0.0.3 10.0.0.2>10.0.0.1 10.0.0.2>10.0.0.3 10.0.0.3>10.0.0.1 10.0.0.3>10.0.0.2",
		"lst-tr":       "10.0.0.1>198.51.100.7 10.0.0.2>198.51.100.7",
		"six":          "10.0.0.1>2001:db8::4 2001:db8::4>10.0.0.1",
	} {
		if got := pairs(group); got != want {
			t.Errorf("group %s: %s, want %s", group, got, want)
		}
	}
	var s mesh.Schedule
	for _, sc := range m.Schedules {
		if sc.Group == "dj" {
			s = sc
		}
	}
	if s.Repeat != 30*time.Minute || s.Slip != 5*time.Minute || s.MaxRuns != 9 ||
		!s.Start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !s.Until.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("schedule: %+v", s)
	}
	if got := strings.Join(m.Tests["tr"].Args, " "); got != "trace --max-hops 20 --probes 2" {
		t.Errorf("trace line: %s", got)
	}
	all := strings.Join(imp.Warnings, "\n")
	for _, key := range []string{`trace spec "first-ttl"`, "relative start and until", "labels (d/v6"} {
		if !strings.Contains(all, key) {
			t.Errorf("no warning names %s:\n%s", key, all)
		}
	}
}

// FuzzConvert: no template makes the importer fail other than with an
// error, and what it writes the mesh parser reads (or refuses for a
// stated limit).
func FuzzConvert(f *testing.F) {
	for _, name := range realTemplates {
		data, err := os.ReadFile(filepath.Join("testdata", "perfsonar", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(minimal(`, "parallel": 2, "congestion": "bbr"`, "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		imp, err := psconfig.Convert("fuzz", data)
		if err != nil {
			return
		}
		if _, err := mesh.Parse("fuzz.yaml", imp.YAML); err != nil && !strings.Contains(err.Error(), "limit") {
			t.Fatalf("the importer wrote a mesh file its parser refuses: %v\n%s", err, imp.YAML)
		}
	})
}
