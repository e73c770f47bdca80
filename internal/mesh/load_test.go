package mesh

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/yamlfile"
	"time"
)

// groupOf is a file of n hosts h0 … h(n−1), one group "all" of kind
// (mesh, or sampled with K partners), one test and one schedule of it.
func groupOf(n int, group, test, repeat string) string {
	var b strings.Builder
	b.WriteString("name: scale\nhosts:\n")
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("h%d", i)
		fmt.Fprintf(&b, "  %s:\n", names[i])
	}
	list := "[" + strings.Join(names, ", ") + "]"
	if group == "mesh" {
		fmt.Fprintf(&b, "groups:\n  all: {mesh: %s}\n", list)
	} else {
		fmt.Fprintf(&b, "groups:\n  all: {sampled: {hosts: %s, partners: %s}}\n", list, strings.TrimPrefix(group, "sampled "))
	}
	fmt.Fprintf(&b, "tests:\n  tput: {%s}\nschedules:\n  - {group: all, test: tput, repeat: %s}\n", test, repeat)
	return b.String()
}

func mustParse(t *testing.T, src string) *Mesh {
	t.Helper()
	m, err := Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A full mesh of 50 hosts running 10 s throughput tests every 10 minutes:
// each host is in 98 ordered pairs, each run holding it 12 s (10 s and
// the 2 s margin the daemon reserves), 1,176 s of every 600 s. Refused,
// naming the host, its utilisation and how it is made.
func TestFullMeshOf50IsRefused(t *testing.T) {
	m := mustParse(t, groupOf(50, "mesh", "test: client -t 10", "10m"))
	loads := m.Utilisation()
	if len(loads) != 50 {
		t.Fatalf("%d hosts loaded, want 50", len(loads))
	}
	want := float64(98*12*time.Second) / float64(600*time.Second)
	for _, h := range loads {
		if h.Util != want || len(h.Loads) != 1 || h.Loads[0].Tasks != 98 || h.Loads[0].Reserve != 12*time.Second {
			t.Fatalf("%s: %v %+v, want %v from 98 runs of 12 s", h.Host, h.Util, h.Loads, want)
		}
	}
	if loads[0].Host != "h0" {
		t.Fatalf("equal loads are by name: %s first", loads[0].Host)
	}
	warning, err := m.CheckUtilisation()
	var e *yamlfile.Error
	if warning != "" || !errors.As(err, &e) {
		t.Fatalf("%q %v: want a refusal", warning, err)
	}
	const msg = "m.yaml:58:5: schedules[0]: host h0 would be busy 196.0% of the time with exclusive runs, over 100.0%: " +
		"98 runs of all/tput every 10m0s, each holding it 12s (the test's length + 2s margin); sample partners (a sampled group) or repeat less often"
	if err.Error() != msg {
		t.Fatalf("got  %q\nwant %q", err, msg)
	}
}

// The sampled form of the same mesh (1 partner a period) takes 2 runs
// of each host's period: 24 s of 600 s.
func TestSampledMeshOf50IsAccepted(t *testing.T) {
	m := mustParse(t, groupOf(50, "sampled 1", "test: client -t 10", "10m"))
	loads := m.Utilisation()
	want := float64(98*12*time.Second) / float64(49*600*time.Second)
	for _, h := range loads {
		if h.Util != want || h.Loads[0].Runs() != 2 || h.Loads[0].Rotation != 49 {
			t.Fatalf("%s: %v %+v, want %v", h.Host, h.Util, h.Loads, want)
		}
	}
	if warning, err := m.CheckUtilisation(); warning != "" || err != nil {
		t.Fatalf("%q %v", warning, err)
	}
	if got := strings.Split(m.UtilisationReport(), "\n")[1]; got != "h0 4.0%: 2 runs of all/tput every 10m0s, each holding it 12s (the test's length + 2s margin)" {
		t.Fatalf("report line %q", got)
	}
}

func TestUtilisationWarnsOverHalf(t *testing.T) {
	// 3 hosts: 4 runs of 12 s each in 80 s, 60%.
	m := mustParse(t, groupOf(3, "mesh", "test: client -t 10", "80s"))
	warning, err := m.CheckUtilisation()
	const want = "m.yaml:11:5: schedules[0]: host h0 is busy 60.0% of the time with exclusive runs, over 50.0%: " +
		"4 runs of all/tput every 1m20s, each holding it 12s (the test's length + 2s margin); its runs will often wait for each other"
	if err != nil || warning != want {
		t.Fatalf("got %q %v\nwant %q", warning, err, want)
	}
	// At 50% exactly: no warning.
	m = mustParse(t, groupOf(3, "mesh", "test: client -t 10", "96s"))
	if warning, err := m.CheckUtilisation(); warning != "" || err != nil {
		t.Fatalf("at 50%%: %q %v", warning, err)
	}
}

// A test's reserve is what its runs hold, and the message says so.
func TestUtilisationUsesTheGivenReserve(t *testing.T) {
	m := mustParse(t, groupOf(3, "mesh", "test: client -t 10, reserve: 30s", "100s"))
	_, err := m.CheckUtilisation()
	if err == nil || !strings.Contains(err.Error(), "120.0%") || !strings.Contains(err.Error(), "each holding it 30s (the test's reserve)") {
		t.Fatalf("%v", err)
	}
}

// Background runs overlap anything: a full mesh of background probes
// takes no host's time, however often it runs.
func TestBackgroundDoesNotCount(t *testing.T) {
	m := mustParse(t, groupOf(50, "mesh", "test: rr -t 5, class: background", "10s"))
	if l := m.Utilisation(); len(l) != 0 {
		t.Fatalf("%+v", l[0])
	}
	if warning, err := m.CheckUtilisation(); warning != "" || err != nil {
		t.Fatalf("%q %v", warning, err)
	}
	if r := m.UtilisationReport(); r != "utilisation: no exclusive runs that repeat\n" {
		t.Fatalf("%q", r)
	}
}

// A host's schedules add up, each with its own period; the error points
// at the one that takes most of it.
func TestSchedulesAddUp(t *testing.T) {
	src := `hosts: {a: , b: , c: }
groups:
  ab: {pairs: [[a, b]]}
  all: {mesh: [a, b, c]}
tests:
  short: {test: client -t 1}
  long: {test: client -t 28}
  probe: {test: rr -t 1, class: background}
schedules:
  - {group: ab, test: short, repeat: 1m}
  - {group: all, test: long, repeat: 2m}
  - {group: all, test: probe, repeat: 10s}
`
	m := mustParse(t, src)
	loads := m.Utilisation()
	// a: 1 run of 3 s a minute, and 4 of 30 s every 2 minutes.
	want := float64(3*time.Second)/float64(time.Minute) + float64(120*time.Second)/float64(2*time.Minute)
	if loads[0].Host != "a" || loads[0].Util != want || len(loads[0].Loads) != 2 {
		t.Fatalf("%+v, want a at %v", loads[0], want)
	}
	if loads[2].Host != "c" || loads[2].Util != 1 {
		t.Fatalf("%+v, want c at 1", loads[2])
	}
	_, err := m.CheckUtilisation()
	if err == nil || !strings.HasPrefix(err.Error(), "m.yaml:11:5: schedules[1]: host a would be busy 105.0% ") ||
		!strings.Contains(err.Error(), "1 run of ab/short every 1m0s, each holding it 3s (the test's length + 2s margin); 4 runs of all/long") {
		t.Fatalf("%v", err)
	}
}

// The utilisation is what the tasks make: per host, the sum of its
// exclusive tasks' reservation ÷ repeat.
func TestUtilisationMatchesTheTasks(t *testing.T) {
	for _, g := range []string{"mesh", "sampled 1", "sampled 3", "sampled 8", "sampled 20"} {
		m := mustParse(t, groupOf(9, g, "test: client -t 5", "7m"))
		fromTasks := map[string]float64{}
		for _, tk := range m.Tasks() {
			u := float64(tk.Duration) / float64(tk.Repeat) // each destination's run
			for _, d := range tk.DestHosts() {
				fromTasks[tk.Source] += u
				fromTasks[d] += u
			}
		}
		loads := m.Utilisation()
		if len(loads) != 9 {
			t.Fatalf("%s: %d hosts", g, len(loads))
		}
		for _, h := range loads {
			if d := h.Util - fromTasks[h.Host]; d > 1e-12 || d < -1e-12 {
				t.Errorf("%s: %s: %v from the file, %v from the tasks", g, h.Host, h.Util, fromTasks[h.Host])
			}
		}
	}
}
