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
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// A sampled group's schedule is K' ≤ K rotating tasks per source (one
// per slot), each repeating every rotation periods with its
// destinations in turn; as the planner plans them (Task.At), in every
// period each host runs to as many partners as the turn has distances
// (at most K) and is tested to by as many, a rotation covers every
// ordered pair exactly once, and the next rotation is the same. The
// exclusive runs are spread over their rounds' slots: no two runs
// sharing a host hold it at once ([start, start + reserve) apart) over
// two rotations, across periods and rotations too, every run ends in
// its period, and no two runs start at one instant (a round's runs all
// started at one instant before: some 500 at 1,000 hosts). At 1,000
// hosts too: a task holds only its own destinations (rotation of them),
// so the check is O(H²) in all, and quick.
func TestSampledRotatingTasks(t *testing.T) {
	for _, c := range []struct {
		hosts, partners, rotation, slots int
	}{
		{7, 1, 6, 1}, {7, 2, 3, 2}, {7, 4, 2, 3}, {7, 9, 1, 6},
		{50, 1, 49, 1}, {50, 4, 13, 4}, {9, 3, 3, 3}, {10, 4, 3, 3}, {6, 5, 1, 5}, {2, 1, 1, 1},
		{1000, 1, 999, 1}, {1000, 4, 250, 4},
	} {
		period := 10 * time.Minute
		reserve := 12 * time.Second // -t 10 and the margin
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
			at       time.Duration // from the first rotation's start
			src, dst int
		}
		var runs []run // over two rotations
		covered := make([]bool, c.hosts*c.hosts)
		perTask := map[string]int{} // source → its tasks
		for _, tk := range tasks {
			if err := tk.Validate(); err != nil {
				t.Fatal(err)
			}
			if tk.Repeat != time.Duration(c.rotation)*period || len(tk.Dests) == 0 || len(tk.Dests) > c.rotation {
				t.Fatalf("%+v: a task repeats every %v with %d destinations, want %d periods and at most that many", c, tk.Repeat, len(tk.Dests), c.rotation)
			}
			if tk.Duration != reserve {
				t.Fatalf("%+v: task %s holds its hosts %v, want %v", c, tk.ID, tk.Duration, reserve)
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
				runs = append(runs, run{r.Planned.Sub(time.Unix(0, 0)), src, dst}, run{next.Planned.Sub(time.Unix(0, 0)), src, dst})
			}
		}
		if len(runs) != 2*c.hosts*(c.hosts-1) {
			t.Fatalf("%+v: %d runs in two rotations, want every ordered pair once a rotation", c, len(runs))
		}
		for h, n := range perTask {
			if n != c.slots {
				t.Fatalf("%+v: %s has %d tasks", c, h, n)
			}
		}
		slices.SortFunc(runs, func(a, b run) int { return int(a.at - b.at) })
		free := make([]time.Duration, c.hosts) // when each host's last run ends
		atOnce, most := 0, 0                   // runs at the instant of the run before; the most
		for j, r := range runs {
			if j > 0 && r.at == runs[j-1].at {
				atOnce++
			} else {
				atOnce = 1
			}
			most = max(most, atOnce)
			if p := r.at / period; r.at+reserve > (p+1)*period {
				t.Fatalf("%+v: h%d → h%d at +%v of period %d ends past it", c, r.src, r.dst, r.at-p*period, p)
			}
			for _, h := range []int{r.src, r.dst} {
				if r.at < free[h] {
					t.Fatalf("%+v: h%d → h%d at %v while h%d is held until %v", c, r.src, r.dst, r.at, h, free[h])
				}
				free[h] = r.at + reserve
			}
		}
		if most > 1 {
			t.Fatalf("%+v: %d runs start at one instant, want each at its own", c, most)
		}
		out, in := make([]int, c.hosts), make([]int, c.hosts)
		for j := 0; j < len(runs); {
			p := runs[j].at / period
			distances := (c.hosts - 1 + c.rotation - 1 - int(p)%c.rotation) / c.rotation // the turn's
			clear(out)
			clear(in)
			k := j
			for ; k < len(runs) && runs[k].at/period == p; k++ {
				out[runs[k].src]++
				in[runs[k].dst]++
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

// A round's runs are spread evenly over its slot, the slot less a
// reservation: at 7 hosts, one partner and a period of 10 minutes, each
// period's single distance makes one cycle of 7 (7 is prime), so 3
// rounds of 3, 3 and 1 runs, 200 s apart; with 12 s reserved, the runs
// of a round of 3 start 0, 62.666 and 125.333 s into it (188 s ÷ 3
// apart). Where a slot is no longer than a reservation, a round's runs
// start at its start, as before: one instant a round, sharing no host.
func TestSampledRoundsSpreadOverTheirSlot(t *testing.T) {
	offsets := func(src string) map[time.Duration][]int { // from the round's start → runs' hosts
		m := mustParse(t, src)
		period := m.Schedules[0].Repeat
		out := map[time.Duration][]int{}
		for _, tk := range m.Tasks() {
			for _, d := range tk.Dests {
				if d.At >= period { // the first period only
					continue
				}
				src, _ := strconv.Atoi(strings.TrimPrefix(tk.Source, "h"))
				dst, _ := strconv.Atoi(strings.TrimPrefix(d.Host, "h"))
				out[d.At] = append(out[d.At], src, dst)
			}
		}
		return out
	}
	spread := offsets(groupOf(7, "sampled 1", "test: client -t 10", "10m"))
	var got []time.Duration
	for at := range spread {
		got = append(got, at)
	}
	slices.Sort(got)
	step := 188 * time.Second / 3
	var want []time.Duration
	for r, n := range []int{3, 3, 1} {
		for j := range n {
			want = append(want, time.Duration(r)*200*time.Second+(time.Duration(j)*step).Truncate(time.Millisecond))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("first period's starts %v, want %v", got, want)
	}
	for at, hosts := range spread {
		if len(hosts) != 2 {
			t.Fatalf("%d runs at +%v, want one", len(hosts)/2, at)
		}
	}

	// 6 distances of 3 rounds in one period of 3 minutes: 10 s a round,
	// under the 12 s a run holds its hosts.
	packed := offsets(groupOf(7, "sampled 9", "test: client -t 10", "3m"))
	if len(packed) != 18 {
		t.Fatalf("%d instants in a period, want one a round (18)", len(packed))
	}
	for at, hosts := range packed {
		if at%(10*time.Second) != 0 {
			t.Fatalf("runs at +%v, not at a round's start", at)
		}
		slices.Sort(hosts)
		if len(slices.Compact(hosts)) != len(hosts) {
			t.Fatalf("the round at +%v shares a host", at)
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
		{"no partners", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b]}}\n", "m.yaml:3:16: groups.g.sampled.partners: missing"},
		{"zero partners", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b], partners: 0}}\n", `m.yaml:3:42: groups.g.sampled.partners: "0": want a count of 1 or more`},
		{"unknown key", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b], partner: 1}}\n", `m.yaml:3:32: groups.g.sampled: unknown key "partner" (known: hosts, partners)`},
		{"unknown host", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, c], partners: 1}}\n", `unknown host or group "c"`},
		{"unknown kind", "hosts: {a: , b: }\ngroups:\n  g: {random: [a, b]}\n", `m.yaml:3:7: groups.g: unknown key "random" (known: mesh, star, pairs, sampled)`},
		{"no repeat", "hosts: {a: , b: }\ngroups:\n  g: {sampled: {hosts: [a, b], partners: 1}}\ntests: {t: {test: client -t 1}}\nschedules:\n  - {group: g, test: t}\n",
			"m.yaml:6:5: schedules[0].repeat: missing: group g is sampled, so its pairs take turns period by period"},
		{"repeat too long", groupOf(50, "sampled 1", "test: client -t 1", "20000h"), "20000h0m0s × the 49 periods group all takes to cover its pairs is over"},
		{"over the task limit", groupOf(1000, "sampled 500", "test: client -t 1", "1h"), "groups.all: a sampled group of 1000 hosts with 500 partners is 500000 tasks a schedule (500 a host), over the limit of 250000"},
		{"over the pair limit", strings.Replace(groupOf(1000, "sampled 4", "test: client -t 1", "1h"), "schedules:\n", "  t2: {test: client -t 2}\n  t3: {test: client -t 3}\n  t4: {test: client -t 4}\n  t5: {test: client -t 5}\nschedules:\n"+
			"  - {group: all, test: t2, repeat: 1h}\n  - {group: all, test: t3, repeat: 1h}\n  - {group: all, test: t4, repeat: 1h}\n  - {group: all, test: t5, repeat: 1h}\n", 1),
			"schedules[4]: the schedules so far test 4995000 ordered pairs, over the limit of 4000000"},
	} {
		_, err := Parse("m.yaml", []byte(c.src))
		var e *yamlfile.Error
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
