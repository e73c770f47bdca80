package mesh

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
)

// A sampled group's schedule is K' ≤ K rotating tasks per source (one
// per slot), each repeating every rotation periods with its
// destinations in turn; as the planner plans them (Task.At), in every
// period each host runs to as many partners as the turn has distances
// (at most K) and is tested to by as many, a rotation covers every
// ordered pair exactly once, the next rotation is the same, and the
// exclusive runs of one instant (a round) share no host, a host's runs
// of a period a round apart at least. At 1,000 hosts too: a task holds
// only its own destinations (rotation of them), so the check is O(H²)
// in all, and quick.
func TestSampledRotatingTasks(t *testing.T) {
	for _, c := range []struct {
		hosts, partners, rotation, slots int
	}{
		{7, 1, 6, 1}, {7, 2, 3, 2}, {7, 4, 2, 3}, {7, 9, 1, 6},
		{50, 1, 49, 1}, {50, 4, 13, 4}, {9, 3, 3, 3}, {10, 4, 3, 3}, {6, 5, 1, 5}, {2, 1, 1, 1},
		{1000, 1, 999, 1}, {1000, 4, 250, 4},
	} {
		period := 10 * time.Minute
		m := mustParse(t, groupOf(c.hosts, "sampled "+strconv.Itoa(c.partners), "test: client -t 10", "10m"))
		tasks := m.Tasks()
		if len(tasks) != c.hosts*c.slots {
			t.Fatalf("%+v: %d tasks, want %d a host", c, len(tasks), c.slots)
		}
		index := map[string]int{}
		for i := range c.hosts {
			index["h"+strconv.Itoa(i)] = i
		}
		type run struct {
			at       time.Duration // from the rotation's start
			src, dst int
		}
		var runs []run
		covered := make([]bool, c.hosts*c.hosts)
		perTask := map[string]int{} // source → its tasks
		for _, tk := range tasks {
			if err := tk.Validate(); err != nil {
				t.Fatal(err)
			}
			if tk.Repeat != time.Duration(c.rotation)*period || len(tk.Dests) == 0 || len(tk.Dests) > c.rotation {
				t.Fatalf("%+v: a task repeats every %v with %d destinations, want %d periods and at most that many", c, tk.Repeat, len(tk.Dests), c.rotation)
			}
			perTask[tk.Source]++
			src := index[tk.Source]
			for seq := range len(tk.Dests) {
				r, ok := tk.At(seq)
				next, ok2 := tk.At(seq + len(tk.Dests))
				d := tk.RunDest(seq)
				if !ok || !ok2 || next.Planned.Sub(r.Planned) != tk.Repeat || tk.RunDest(seq+len(tk.Dests)) != d {
					t.Fatalf("%+v: task %s: run %d at %v to %s, a rotation later at %v to %s", c, tk.ID, seq, r.Planned, d.Host, next.Planned, tk.RunDest(seq+len(tk.Dests)).Host)
				}
				if d.Addr != d.Host+":5201" {
					t.Fatalf("%+v: %s's address %q", c, d.Host, d.Addr)
				}
				dst := index[d.Host]
				if dst == src || covered[src*c.hosts+dst] {
					t.Fatalf("%+v: %s → %s twice in a rotation, or to itself", c, tk.Source, d.Host)
				}
				covered[src*c.hosts+dst] = true
				runs = append(runs, run{r.Planned.Sub(time.Unix(0, 0)), src, dst})
			}
		}
		if len(runs) != c.hosts*(c.hosts-1) {
			t.Fatalf("%+v: %d runs a rotation, want every ordered pair once", c, len(runs))
		}
		for h, n := range perTask {
			if n != c.slots {
				t.Fatalf("%+v: %s has %d tasks", c, h, n)
			}
		}
		slices.SortFunc(runs, func(a, b run) int { return int(a.at - b.at) })
		out, in := make([]int, c.hosts), make([]int, c.hosts)
		last := make([]time.Duration, c.hosts) // each host's last run, +1 ns (0: none this period)
		busyAt := make([]time.Duration, c.hosts)
		for j := 0; j < len(runs); {
			p := runs[j].at / period
			distances := (c.hosts - 1 + c.rotation - 1 - int(p)) / c.rotation // the turn's
			clear(out)
			clear(in)
			clear(last)
			instants := map[time.Duration]bool{}
			k := j
			for ; k < len(runs) && runs[k].at/period == p; k++ {
				instants[runs[k].at] = true
			}
			if len(instants) < 2*distances || len(instants) > 3*distances {
				t.Fatalf("%+v: period %d: %d rounds for %d distances", c, p, len(instants), distances)
			}
			gap := (period / time.Duration(len(instants))).Truncate(time.Millisecond)
			for _, r := range runs[j:k] {
				out[r.src]++
				in[r.dst]++
				for _, h := range []int{r.src, r.dst} {
					if busyAt[h] == r.at+1 {
						t.Fatalf("%+v: period %d: h%d has two runs at +%v", c, p, h, r.at-p*period)
					}
					if last[h] != 0 && r.at-(last[h]-1) < gap {
						t.Fatalf("%+v: period %d: h%d's runs %v apart, under a round (%v)", c, p, h, r.at-(last[h]-1), gap)
					}
					busyAt[h], last[h] = r.at+1, r.at+1
				}
			}
			for h := range c.hosts {
				if out[h] != distances || in[h] != distances || distances > c.partners {
					t.Fatalf("%+v: period %d: h%d runs to %d partners, is run to by %d; want %d (at most %d)", c, p, h, out[h], in[h], distances, c.partners)
				}
			}
			j = k
		}
	}
}

// Background runs of a sampled group start on their turn's period, as
// exclusive ones are spread over it; the planner (schedule.Next) plans
// each run to its own destination.
func TestSampledBackgroundRunsAsPlanned(t *testing.T) {
	period := time.Minute
	m := mustParse(t, groupOf(7, "sampled 2", "test: rr -t 5, class: background", "1m"))
	tasks := m.Tasks()
	seen := map[Pair]int{}
	for p := range 6 { // two rotations of 3 periods
		from := time.Unix(0, 0).Add(time.Duration(p) * period)
		for _, tk := range tasks {
			for _, r := range schedule.Next(tk, from, period, 10) {
				if !r.Planned.Equal(from) {
					t.Fatalf("background run %s at %v, want its period's start %v", r.ID, r.Planned, from)
				}
				seen[Pair{tk.Source, tk.RunDest(r.Seq).Host}]++
			}
		}
	}
	if len(seen) != 42 {
		t.Fatalf("%d pairs in two rotations, want 42", len(seen))
	}
	for pr, n := range seen {
		if n != 2 {
			t.Fatalf("%v ran %d times in two rotations", pr, n)
		}
	}
}

// The turns are a function of the file: parsing again gives the same
// tasks, and so does listing the hosts in another order; a mesh of
// another name draws other partners.
func TestSampledIsAFunctionOfTheFile(t *testing.T) {
	src := groupOf(12, "sampled 2", "test: client -t 10", "10m")
	a, b := mustParse(t, src).Tasks(), mustParse(t, src).Tasks()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two parses differ")
	}
	list := "[h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11]"
	reversed := strings.Replace(src, list, "[h11, h10, h9, h8, h7, h6, h5, h4, h3, h2, h1, h0]", 1)
	if reversed == src {
		t.Fatal("the test's file has no host list to reorder")
	}
	if !reflect.DeepEqual(mustParse(t, reversed).Tasks(), a) {
		t.Fatal("the hosts' order in the file changed the turns")
	}
	other := mustParse(t, strings.Replace(src, "name: scale", "name: other", 1)).Tasks()
	starts := func(ts []*schedule.Task) map[Pair]time.Duration {
		out := map[Pair]time.Duration{}
		for _, tk := range ts {
			for _, d := range tk.Dests {
				out[Pair{tk.Source, d.Host}] = d.At
			}
		}
		return out
	}
	if reflect.DeepEqual(starts(other), starts(a)) {
		t.Fatal("another mesh name draws the same turns")
	}
}

// max_runs counts a pair's runs, as for a task of one pair: a rotating
// task runs that many rotations.
func TestSampledMaxRuns(t *testing.T) {
	src := strings.Replace(groupOf(7, "sampled 4", "test: client -t 10", "10m"), "repeat: 10m}", "repeat: 10m, max_runs: 3}", 1)
	for _, tk := range mustParse(t, src).Tasks() {
		if tk.MaxRuns != 3*len(tk.Dests) {
			t.Fatalf("task %s: max_runs %d for %d destinations", tk.ID, tk.MaxRuns, len(tk.Dests))
		}
		if _, ok := tk.At(3 * len(tk.Dests)); ok {
			t.Fatalf("task %s: a fourth rotation", tk.ID)
		}
	}
}

func TestSampledBadInput(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"no partners", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b]}}\n", "m.yaml:3: groups.g.sampled.partners: missing"},
		{"zero partners", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b], partners: 0}}\n", `m.yaml:3: groups.g.sampled.partners: "0": want a count of 1 or more`},
		{"unknown key", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b], partner: 1}}\n", "m.yaml:3: groups.g.sampled.partner: unknown key (want hosts, partners)"},
		{"unknown host", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, c], partners: 1}}\n", `unknown host or group "c"`},
		{"unknown kind", "hosts: {a: , b: }\ngroups:\n  g: {random: [a, b]}\n", "unknown group kind (want mesh, star, pairs, sampled)"},
		{"no repeat", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b], partners: 1}}\ntests: {t: {test: client -t 1}}\nschedules:\n  - {group: g, test: t}\n",
			"m.yaml:6: schedules[0].repeat: missing: group g is sampled, so its pairs take turns period by period"},
		{"repeat too long", groupOf(50, "sampled 1", "test: client -t 1", "20000h"), "20000h0m0s × the 49 periods group all takes to cover its pairs is over"},
		{"over the task limit", groupOf(1000, "sampled 500", "test: client -t 1", "1h"), "groups.all: a sampled group of 1000 hosts with 500 partners is 500000 tasks a schedule (500 a host), over the limit of 250000"},
		{"over the pair limit", strings.Replace(groupOf(1000, "sampled 4", "test: client -t 1", "1h"), "schedules:\n", "  t2: {test: client -t 2}\n  t3: {test: client -t 3}\n  t4: {test: client -t 4}\n  t5: {test: client -t 5}\nschedules:\n"+
			"  - {group: all, test: t2, repeat: 1h}\n  - {group: all, test: t3, repeat: 1h}\n  - {group: all, test: t4, repeat: 1h}\n  - {group: all, test: t5, repeat: 1h}\n", 1),
			"schedules[4]: the schedules so far test 4995000 ordered pairs, over the limit of 4000000"},
	} {
		_, err := Parse("m.yaml", []byte(c.src))
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
}

// A sampled group may name groups among its hosts, and be named by them.
func TestSampledMembersAreGroups(t *testing.T) {
	src := `hosts: {a: , b: , c: , d: }
groups:
  left: {mesh: [a, b]}
  s: {sampled: {hosts: [left, c, d], partners: 1}}
  all: {mesh: [s]}
tests: {t: {test: client -t 1}}
schedules:
  - {group: s, test: t, repeat: 1m}
  - {group: all, test: t, repeat: 1h}
`
	m := mustParse(t, src)
	if n := len(m.Pairs("s")); n != 12 {
		t.Fatalf("%d pairs of s", n)
	}
	if n := len(m.Pairs("all")); n != 12 {
		t.Fatalf("%d pairs of all", n)
	}
}
