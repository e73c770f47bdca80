package psconfig

import (
	"encoding/json"
	"fmt"
	"time"
)

// converter holds one conversion's state: the hosts made so far and the
// warnings.
type converter struct {
	w         *warnings
	file      *File
	addrs     map[string]*address
	classes   map[string]*class
	hostByRef map[string]string // address name (or name/label, literal:addr) → mesh host
	usedHosts map[string]bool
	origin    map[string]string   // mesh host → the machine it is on, for excludes-self
	notes     map[string]hostNote // mesh host → what to say of it if it is kept
}

// schedule is a template's schedule.
type schedule struct {
	repeat, slip time.Duration
	sliprand     bool
	start, until time.Time
	maxRuns      int
}

func (c *converter) convert(name string, t *template) (*File, error) {
	c.file = &File{Name: name, Hosts: map[string]Host{}, Groups: map[string]Group{}, Tests: map[string]Test{}}
	c.origin = map[string]string{}
	c.notes = map[string]hostNote{}
	c.readClasses(t.Classes)
	c.readAddresses(t.Addresses)

	groups := map[string]*group{}
	for _, n := range sortedKeys(t.Groups) {
		if !namePattern.MatchString(n) {
			c.w.linef("groups: %q is not a pSConfig name; left out", n)
			continue
		}
		if g := c.readGroup(n, t.Groups[n]); g != nil {
			groups[n] = g
		}
	}
	tests := map[string]*test{}
	for _, n := range sortedKeys(t.Tests) {
		if !namePattern.MatchString(n) {
			c.w.linef("tests: %q is not a pSConfig name; left out", n)
			continue
		}
		tt, err := c.readTest(n, t.Tests[n])
		if err != nil {
			return nil, err
		}
		if tt != nil {
			tests[n] = tt
		}
	}
	scheds := map[string]*schedule{}
	for _, n := range sortedKeys(t.Schedules) {
		s, err := c.readSchedule(n, t.Schedules[n])
		if err != nil {
			return nil, err
		}
		scheds[n] = s
	}
	for _, n := range sortedKeys(t.Tasks) {
		if err := c.readTask(n, t.Tasks[n], groups, tests, t.Tests, scheds); err != nil {
			return nil, err
		}
	}
	if len(c.file.Schedules) == 0 {
		return nil, fmt.Errorf("no task could be carried over (see the warnings)")
	}
	// Hosts no schedule tests are left out: a mesh file names its hosts
	// for its groups' sake.
	used := map[string]bool{}
	for _, g := range c.file.Groups {
		for _, h := range g.Mesh {
			used[h] = true
		}
		for _, p := range g.Pairs {
			used[p[0]], used[p[1]] = true, true
		}
	}
	for _, h := range sortedKeys(c.file.Hosts) {
		if !used[h] {
			delete(c.file.Hosts, h)
		} else if n, ok := c.notes[h]; ok {
			c.w.dropped(n.key, n.where, n.why)
		}
	}
	return c.file, nil
}

func (c *converter) readSchedule(name string, raw json.RawMessage) (*schedule, error) {
	where := "schedules." + name
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("%s: want an object", where)
	}
	s := &schedule{}
	for _, k := range sortedKeys(fields) {
		var str string
		switch k {
		case "repeat", "slip":
			if err := json.Unmarshal(fields[k], &str); err != nil {
				return nil, fmt.Errorf("%s.%s: want an ISO 8601 duration such as PT4H", where, k)
			}
			d, err := ParseDuration(str)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %v", where, k, err)
			}
			if k == "repeat" {
				s.repeat = d
			} else {
				s.slip = d
			}
		case "sliprand":
			if err := json.Unmarshal(fields[k], &s.sliprand); err != nil {
				return nil, fmt.Errorf("%s.sliprand: want true or false", where)
			}
		case "start", "until":
			if err := json.Unmarshal(fields[k], &str); err != nil {
				return nil, fmt.Errorf("%s.%s: want a timestamp", where, k)
			}
			at, err := ParseTimestamp(str)
			if err != nil {
				c.w.dropped("relative start and until", where+"."+k, "an instant relative to when a template is read means nothing in a shared schedule; give an absolute one")
				continue
			}
			if k == "start" {
				s.start = at
			} else {
				s.until = at
			}
		case "max-runs":
			if err := json.Unmarshal(fields[k], &s.maxRuns); err != nil || s.maxRuns < 0 {
				return nil, fmt.Errorf("%s.max-runs: want a count", where)
			}
		case "_meta":
			c.w.dropped("schedules.*._meta", name, "no mesh equivalent")
		default:
			c.w.dropped("schedules.*."+k, name, "not a pSConfig key")
		}
	}
	return s, nil
}

func (c *converter) readTask(name string, raw json.RawMessage, groups map[string]*group, tests map[string]*test, rawTests map[string]json.RawMessage, scheds map[string]*schedule) error {
	where := "tasks." + name
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%s: want an object", where)
	}
	var gname, tname, sname string
	var disabled bool
	var scheduledBy int
	for _, k := range sortedKeys(fields) {
		var err error
		switch k {
		case "group":
			err = json.Unmarshal(fields[k], &gname)
		case "test":
			err = json.Unmarshal(fields[k], &tname)
		case "schedule":
			err = json.Unmarshal(fields[k], &sname)
		case "disabled":
			err = json.Unmarshal(fields[k], &disabled)
		case "scheduled-by":
			err = json.Unmarshal(fields[k], &scheduledBy)
			if err == nil && scheduledBy != 0 {
				c.w.dropped("tasks.*.scheduled-by", name, "the source's daemon always runs a test")
			}
		case "archives":
			c.w.dropped("tasks.*.archives", name, "wireperf's daemons store their results in the mesh's own archive")
		case "tools":
			c.w.dropped("tasks.*.tools", name, "wireperf runs its own tests")
		case "priority":
			c.w.dropped("tasks.*.priority", name, "the schedule's reservations order runs")
		case "reference", "subtasks", "_meta":
			c.w.dropped("tasks.*."+k, name, "no mesh equivalent")
		default:
			c.w.dropped("tasks.*."+k, name, "not a pSConfig key")
		}
		if err != nil {
			return fmt.Errorf("%s.%s: %v", where, k, err)
		}
	}
	if disabled {
		c.w.dropped("disabled tasks", name, "left out")
		return nil
	}
	g, gok := groups[gname]
	t, tok := tests[tname]
	switch {
	case gname == "" || tname == "":
		return fmt.Errorf("%s: a task needs a group and a test", where)
	case !gok:
		c.w.linef("%s: its group %q is not in the template or was left out; task left out", where, gname)
		return nil
	case !tok:
		if _, inTemplate := rawTests[tname]; inTemplate {
			c.w.dropped("tasks of tests left out", name, "their test was left out (above)")
		} else {
			c.w.linef("%s: its test %q is not in the template; task left out", where, tname)
		}
		return nil
	}
	pairs, err := c.taskPairs(g, t)
	if err != nil {
		c.w.linef("%s: %v; task left out", where, err)
		return nil
	}
	s := Schedule{Group: c.groupFor(g, t, pairs), Test: t.name}
	if sname == "" {
		if t.defaultRepeat > 0 {
			s.Repeat = t.defaultRepeat
			c.w.dropped("continuous tests", name, "perfSONAR runs them without pause; here one session every "+duration(t.defaultRepeat)+" (set repeat to sample more often)")
		} else {
			s.Repeat, s.MaxRuns = 24*time.Hour, 1
			c.w.dropped("tasks without a schedule", name, "run once (max_runs: 1), as pScheduler runs a task with no repeat")
		}
	} else {
		sc, ok := scheds[sname]
		if !ok {
			c.w.linef("%s: its schedule %q is not in the template; task left out", where, sname)
			return nil
		}
		s.Repeat, s.Slip, s.Start, s.Until, s.MaxRuns = sc.repeat, sc.slip, sc.start, sc.until, sc.maxRuns
		if sc.sliprand {
			// pScheduler starts the run at a random instant of its slip
			// window, later if the hosts are busy. A mesh run's random
			// delay must be shorter than its repeat: over the whole
			// period it is nine tenths of it, and the rest is its slip.
			s.RandomSlip, s.Slip = sc.slip, 0
			if limit := s.Repeat - s.Repeat/10; s.Repeat > 0 && s.RandomSlip > limit {
				s.RandomSlip, s.Slip = limit, sc.slip-limit
				c.w.dropped("sliprand over the whole repeat", sname, "random_slip is nine tenths of the repeat and slip the rest: a run's random delay must be shorter than its repeat")
			}
		}
		if s.Repeat == 0 {
			s.Repeat, s.MaxRuns = 24*time.Hour, 1
			c.w.dropped("schedules without a repeat", sname, "run once (max_runs: 1)")
		}
	}
	c.ensureTest(t)
	c.file.Schedules = append(c.file.Schedules, s)
	return nil
}

// ensureTest adds a test to the file once.
func (c *converter) ensureTest(t *test) {
	if _, ok := c.file.Tests[t.name]; ok {
		return
	}
	mt := Test{Line: joinLine(t.line)}
	if t.background {
		mt.Class = "background"
	}
	c.file.Tests[t.name] = mt
}

func joinLine(words []string) string {
	out := ""
	for i, w := range words {
		if i > 0 {
			out += " "
		}
		out += w
	}
	return out
}

// taskPairs is the ordered (source, destination) pairs one task tests:
// its group's pairs in the order its test's source and dest templates
// say, or for a list group, each address to (or from) the host the test
// names outright.
func (c *converter) taskPairs(g *group, t *test) ([][2]string, error) {
	if g.kind == "list" {
		lit := t.dest
		member := t.source
		if lit.index >= 0 {
			lit, member = t.source, t.dest
		}
		if lit.index >= 0 || member.index != 0 {
			return nil, fmt.Errorf("a list group's test must name one end outright and the other {%% address[0] %%}")
		}
		h, err := c.literalHost(lit.literal)
		if err != nil {
			return nil, err
		}
		var pairs [][2]string
		for _, m := range g.members {
			if m == h {
				continue
			}
			if t.dest.index < 0 {
				pairs = append(pairs, [2]string{m, h})
			} else {
				pairs = append(pairs, [2]string{h, m})
			}
		}
		if len(pairs) == 0 {
			return nil, fmt.Errorf("no pair of two hosts")
		}
		return pairs, nil
	}
	if t.source.index < 0 || t.dest.index < 0 {
		return nil, fmt.Errorf("a %s group's test takes its two ends from the group ({%% address[0] %%} and {%% address[1] %%})", g.kind)
	}
	if t.source.index == t.dest.index {
		return nil, fmt.Errorf("the test's source and dest are the same address")
	}
	pairs := make([][2]string, len(g.pairs))
	for i, p := range g.pairs {
		pairs[i] = [2]string{p[t.source.index], p[t.dest.index]}
	}
	return pairs, nil
}

// groupFor names the mesh group of these pairs: the template group's own
// name when they are its pairs as they are, else a name saying how they
// differ, made once.
func (c *converter) groupFor(g *group, t *test, pairs [][2]string) string {
	name := g.name
	switch {
	case g.kind == "list":
		name = g.name + "-" + t.name
	case t.source.index == 1:
		name = g.name + "-reversed"
	}
	if _, ok := c.file.Groups[name]; ok {
		return name
	}
	if g.whole && g.kind == "mesh" && t.source.index == 0 {
		c.file.Groups[name] = Group{Mesh: g.members}
	} else {
		c.file.Groups[name] = Group{Pairs: pairs}
	}
	return name
}
