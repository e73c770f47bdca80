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

// A sampled group expands to every ordered pair, each a task repeating
// every rotation periods; in every period, as the planner plans it,
// each host runs to at most K partners and is tested to by as many,
// every period brings it different ones, and a rotation covers every
// pair once: period p is the same as period p + rotation.
func TestSampledTurns(t *testing.T) {
	for _, c := range []struct {
		hosts, partners, rotation int
	}{{50, 1, 49}, {9, 3, 3}, {10, 4, 3}, {6, 5, 1}, {6, 9, 1}, {2, 1, 1}} {
		period := 10 * time.Minute
		m := mustParse(t, groupOf(c.hosts, "sampled "+strconv.Itoa(c.partners), "test: client -t 10", "10m"))
		tasks := m.Tasks()
		if len(tasks) != c.hosts*(c.hosts-1) {
			t.Fatalf("%+v: %d tasks, want every ordered pair", c, len(tasks))
		}
		pairs := map[Pair]bool{}
		for _, tk := range tasks {
			if err := tk.Validate(); err != nil {
				t.Fatal(err)
			}
			pairs[Pair{tk.Source, tk.Dest}] = true
			if tk.Repeat != time.Duration(c.rotation)*period {
				t.Fatalf("%+v: a pair repeats every %v, want %d periods", c, tk.Repeat, c.rotation)
			}
		}
		if len(pairs) != len(tasks) {
			t.Fatalf("%+v: pairs repeat", c)
		}
		epoch := time.Unix(0, 0)
		covered := map[Pair]int{}
		partnersBefore := map[int]map[string]string{} // period mod rotation → host → its partners
		for p := range 2 * c.rotation {
			from := epoch.Add(time.Duration(p) * period)
			out, in := map[string][]string{}, map[string]int{}
			for _, tk := range tasks {
				for range schedule.Next(tk, from, period, 10) {
					out[tk.Source] = append(out[tk.Source], tk.Dest)
					in[tk.Dest]++
					if p < c.rotation {
						covered[Pair{tk.Source, tk.Dest}]++
					}
				}
			}
			want := (c.hosts - 1 + c.rotation - 1 - p%c.rotation) / c.rotation // the turn's distances
			for i := range c.hosts {
				h := "h" + strconv.Itoa(i)
				if len(out[h]) != want || in[h] != want || want > c.partners {
					t.Fatalf("%+v: period %d: %s runs to %d partners, is run to by %d; want %d (at most %d)", c, p, h, len(out[h]), in[h], want, c.partners)
				}
				got := strings.Join(out[h], ",")
				if prev, ok := partnersBefore[p%c.rotation][h]; ok && prev != got {
					t.Fatalf("%+v: period %d: %s's partners %s, a rotation before %s", c, p, h, got, prev)
				}
				if partnersBefore[p%c.rotation] == nil {
					partnersBefore[p%c.rotation] = map[string]string{}
				}
				partnersBefore[p%c.rotation][h] = got
			}
		}
		for pr := range pairs {
			if covered[pr] != 1 {
				t.Fatalf("%+v: %v ran %d times in a rotation, want once", c, pr, covered[pr])
			}
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
	starts := func(ts []*schedule.Task) map[Pair]time.Time {
		out := map[Pair]time.Time{}
		for _, tk := range ts {
			out[Pair{tk.Source, tk.Dest}] = tk.Start
		}
		return out
	}
	if reflect.DeepEqual(starts(other), starts(a)) {
		t.Fatal("another mesh name draws the same turns")
	}
}

// A sampled group's exclusive runs start in rounds over their period:
// the runs of a round share no host, and a host's runs of one period are
// a round apart at least (2 or 3 rounds a distance), so none waits for
// another.
func TestSampledRounds(t *testing.T) {
	for _, c := range []struct{ hosts, partners int }{{50, 1}, {50, 4}, {9, 3}, {10, 4}, {6, 9}, {7, 2}, {2, 1}} {
		m := mustParse(t, groupOf(c.hosts, "sampled "+strconv.Itoa(c.partners), "test: client -t 10", "10m"))
		tasks := m.Tasks()
		rotation := tasks[0].Repeat / (10 * time.Minute)
		for p := range int(rotation) {
			from := time.Unix(0, 0).Add(time.Duration(p) * 10 * time.Minute)
			at := map[string][]time.Time{} // host → its runs' instants
			busy := map[time.Time]map[string]bool{}
			for _, tk := range tasks {
				for _, r := range schedule.Next(tk, from, 10*time.Minute, 10) {
					if busy[r.Planned] == nil {
						busy[r.Planned] = map[string]bool{}
					}
					for _, h := range []string{tk.Source, tk.Dest} {
						if busy[r.Planned][h] {
							t.Fatalf("%+v: period %d: %s has two runs at +%v", c, p, h, r.Planned.Sub(from))
						}
						busy[r.Planned][h] = true
						at[h] = append(at[h], r.Planned)
					}
				}
			}
			// Distances of this turn: (H−1)/rotation or one more, 3 rounds each at most.
			distances := (c.hosts - 1 + int(rotation) - 1 - p) / int(rotation)
			if len(busy) < 2*distances || len(busy) > 3*distances {
				t.Fatalf("%+v: period %d: %d rounds for %d distances", c, p, len(busy), distances)
			}
			gap := 10 * time.Minute / time.Duration(len(busy))
			for h, ts := range at {
				slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
				for k := 1; k < len(ts); k++ {
					if d := ts[k].Sub(ts[k-1]); d < gap.Truncate(time.Millisecond) {
						t.Fatalf("%+v: period %d: %s's runs %v apart, under a round (%v)", c, p, h, d, gap)
					}
				}
			}
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
		{"over the task limit", groupOf(501, "sampled 4", "test: client -t 1", "1h"), "a sampled group of 501 hosts is 250500 ordered pairs (a task each), over the limit of 250000"},
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
