// Package mesh reads a mesh file (hosts, groups of them, tests and the
// schedules that run tests over groups) and expands it into scheduled
// tasks, one per ordered pair and schedule (over a sampled group, a few
// rotating tasks per host instead). Expansion is a pure function
// of the file: the same file always gives the same tasks, with the same
// IDs, so that applying it twice changes nothing.
package mesh

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/testline"
	"github.com/wireperf/wireperf/internal/units"
)

// DefaultPort is where a host's daemon serves tests unless the file says.
const DefaultPort = 5201

// Error is bad input: the file, the line and the key it is about.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s:%d: %s", printable(e.File), e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", printable(e.File), e.Line, printable(e.Key), e.Msg)
}

// printable is s, quoted with its escapes when it is no name
// (schedule.CheckName): an error about a name must not print it raw.
func printable(s string) string {
	if schedule.CheckName(s) != nil {
		return strconv.Quote(s)
	}
	return s
}

// Host is one host of the mesh.
type Host struct {
	Name string
	Addr string // where the others reach its server
	Port int
}

// Endpoint is HOST:PORT, the destination a test dials.
func (h Host) Endpoint() string { return net.JoinHostPort(h.Addr, strconv.Itoa(h.Port)) }

// Test is a named test line and how the grid colours its results.
type Test struct {
	Name    string
	Args    []string // the command and its flags, without the destination
	Class   schedule.Class
	Reserve time.Duration // how long a run holds its hosts
	// ReserveGiven: Reserve is the file's reserve, not the test's
	// length and the margin (ReserveFor).
	ReserveGiven bool
	Thresholds   schedule.Thresholds
}

// Schedule runs one test over one group's pairs.
type Schedule struct {
	Group, Test string
	Repeat      time.Duration
	Slip        time.Duration
	RandomSlip  time.Duration
	Start       time.Time
	Until       time.Time
	MaxRuns     int

	key  string // schedules[i], and its line: where errors about it point
	line int
}

// Pair is an ordered pair: the source runs the test to the destination.
type Pair struct{ Source, Dest string }

// Mesh is a parsed, checked mesh file.
type Mesh struct {
	Name      string // the tasks' origin: the file's "name", else its base name
	Hosts     map[string]Host
	Tests     map[string]Test
	Schedules []Schedule
	pairs     map[string][]Pair    // per group
	sampled   map[string]*sampling // per sampled group: when each pair takes its turn
	file      string               // the file's name, for errors found after parsing
}

// Commands a test line may start with.

// A mesh file's limits, checked before anything is expanded, so that no
// file can make a daemon or the CLI spend unbounded time or memory.
// A full mesh of MaxHosts is MaxHosts × (MaxHosts − 1) ordered pairs: a
// group larger than MaxTasks allows is refused before its pairs are
// made (a larger mesh wants groups that pick partners, not a full mesh).
// A sampled group is K tasks a host, each with its destinations over the
// rotation (at most schedule.MaxDests): MaxPairs bounds those lists'
// length over every schedule.
const (
	MaxFileSize  = 4 << 20 // bytes: the daemon API's body limit too
	MaxScalarLen = 1024    // bytes of any one value (names, addresses, test lines)
	MaxNodes     = 200000  // YAML nodes: keys, values and list items
	MaxHosts     = 2000
	MaxTasks     = 250000  // tasks the file expands to, over every schedule: a full mesh of 500 hosts
	MaxPairs     = 4000000 // ordered pairs the tasks test, over every schedule: four schedules over a sampled group of 1,000 hosts
)

// Parse reads and checks a mesh file. Any error is an *Error.
func Parse(file string, data []byte) (*Mesh, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("%d bytes, over the limit of %d", len(data), MaxFileSize)}
	}
	p := &parser{file: file}
	m, err := p.parse(data)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = &Error{File: file, Line: 1, Msg: err.Error()}
		}
		return nil, err
	}
	return m, nil
}

type parser struct {
	file string
}

func (p *parser) errf(n *yaml.Node, key, format string, args ...any) error {
	line := 1
	if n != nil {
		line = n.Line
	}
	return &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

type entry struct {
	key   string
	kn, v *yaml.Node
}

// mapping lists a mapping's entries in order; anything else, or a
// repeated key, is an error.
func (p *parser) mapping(n *yaml.Node, key string) ([]entry, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, key, "want a mapping")
	}
	seen := map[string]bool{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return nil, p.errf(k, join(key, k.Value), "given twice")
		}
		seen[k.Value] = true
		out = append(out, entry{k.Value, k, n.Content[i+1]})
	}
	return out, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func (p *parser) scalar(e entry, key string) (string, error) {
	if e.v.Kind != yaml.ScalarNode {
		return "", p.errf(e.v, key, "want a value")
	}
	return e.v.Value, nil
}

func (p *parser) strings(n *yaml.Node, key string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, key, "want a list")
	}
	var out []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.Value == "" {
			return nil, p.errf(c, key, "want a name")
		}
		out = append(out, c.Value)
	}
	return out, nil
}

func (p *parser) duration(e entry, key string) (time.Duration, error) {
	s, err := p.scalar(e, key)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, p.errf(e.v, key, "%q: want a duration such as 30s or 4h", s)
	}
	return d, nil
}

type rawGroup struct {
	node     *yaml.Node
	kind     string // mesh, star, pairs, sampled
	members  []string
	center   string
	pairs    []Pair
	partners int // sampled: partners per host per period
}

// yamlError is the decoder's error at file:line, the position said once:
// the decoder's own "line N:" prefix (on each of a TypeError's problems,
// after "unmarshal errors:") becomes the Error's line.
func (p *parser) yamlError(err error) error {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = slices.Clone(te.Errors)
	}
	line := 1
	for i, msg := range msgs {
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if num, after, ok := strings.Cut(rest, ":"); ok {
				if n, err := strconv.Atoi(num); err == nil {
					if i == 0 {
						line = n
					}
					msg = strings.TrimSpace(after)
					if i > 0 {
						msg = fmt.Sprintf("%s (line %d)", msg, n)
					}
				}
			}
		}
		msgs[i] = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
	}
	return &Error{File: p.file, Line: line, Msg: strings.Join(msgs, "; ")}
}

func (p *parser) parse(data []byte) (*Mesh, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, p.yamlError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, p.errf(nil, "", "empty file")
	}
	if err := p.checkSizes(&doc); err != nil {
		return nil, err
	}
	top, err := p.mapping(doc.Content[0], "")
	if err != nil {
		return nil, err
	}
	m := &Mesh{Name: filepath.Base(p.file), Hosts: map[string]Host{}, Tests: map[string]Test{}, pairs: map[string][]Pair{}, sampled: map[string]*sampling{}, file: p.file}
	groups := map[string]*rawGroup{}
	var scheds []entry
	for _, e := range top {
		switch e.key {
		case "name":
			if m.Name, err = p.scalar(e, "name"); err != nil {
				return nil, err
			}
		case "hosts":
			if err := p.hosts(m, e.v); err != nil {
				return nil, err
			}
		case "groups":
			es, err := p.mapping(e.v, "groups")
			if err != nil {
				return nil, err
			}
			for _, g := range es {
				rg, err := p.group(g)
				if err != nil {
					return nil, err
				}
				groups[g.key] = rg
			}
		case "tests":
			es, err := p.mapping(e.v, "tests")
			if err != nil {
				return nil, err
			}
			for _, t := range es {
				tt, err := p.test(t)
				if err != nil {
					return nil, err
				}
				m.Tests[t.key] = tt
			}
		case "schedules":
			if e.v.Kind != yaml.SequenceNode {
				return nil, p.errf(e.v, "schedules", "want a list")
			}
			for i, n := range e.v.Content {
				scheds = append(scheds, entry{fmt.Sprintf("schedules[%d]", i), nil, n})
			}
		default:
			return nil, p.errf(e.kn, e.key, "unknown key (want name, hosts, groups, tests, schedules)")
		}
	}
	if err := schedule.CheckName(m.Name); err != nil {
		return nil, p.errf(doc.Content[0], "name", "%q: %v", m.Name, err)
	}
	if len(m.Hosts) == 0 {
		return nil, p.errf(doc.Content[0], "hosts", "no hosts")
	}
	for name := range groups {
		if _, clash := m.Hosts[name]; clash {
			return nil, p.errf(groups[name].node, "groups."+name, "a host has the same name")
		}
	}
	if err := p.expandGroups(m, groups); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	tasks, pairs := 0, 0
	for _, e := range scheds {
		s, err := p.schedule(m, e)
		if err != nil {
			return nil, err
		}
		k := s.Group + "/" + s.Test
		if seen[k] {
			return nil, p.errf(e.v, e.key, "test %s on group %s is scheduled twice", s.Test, s.Group)
		}
		seen[k] = true
		m.Schedules = append(m.Schedules, s)
		n, np := len(m.pairs[s.Group]), len(m.pairs[s.Group])
		if sm := m.sampled[s.Group]; sm != nil {
			n, np = sm.tasks(), sm.pairCount()
		}
		if tasks += n; tasks > MaxTasks {
			return nil, p.errf(e.v, e.key, "the schedules so far make %d tasks, over the limit of %d", tasks, MaxTasks)
		}
		if pairs += np; pairs > MaxPairs {
			return nil, p.errf(e.v, e.key, "the schedules so far test %d ordered pairs, over the limit of %d", pairs, MaxPairs)
		}
	}
	return m, nil
}

// checkSizes walks the document once: no value longer than
// MaxScalarLen, no more than MaxNodes nodes, no alias (an alias can make
// a small file expand to a large one).
func (p *parser) checkSizes(doc *yaml.Node) error {
	nodes := 0
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if nodes++; nodes > MaxNodes {
			return p.errf(n, "", "more than %d values, over the limit", MaxNodes)
		}
		if n.Kind == yaml.AliasNode {
			return p.errf(n, "", "aliases (*name) are not taken")
		}
		if len(n.Value) > MaxScalarLen {
			return p.errf(n, "", "a value of %d bytes, over the limit of %d", len(n.Value), MaxScalarLen)
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(doc)
}

func (p *parser) hosts(m *Mesh, n *yaml.Node) error {
	es, err := p.mapping(n, "hosts")
	if err != nil {
		return err
	}
	if len(es) > MaxHosts {
		return p.errf(n, "hosts", "%d hosts, over the limit of %d", len(es), MaxHosts)
	}
	for _, e := range es {
		key := "hosts." + e.key
		h := Host{Name: e.key, Addr: e.key, Port: DefaultPort}
		if err := testline.CheckHostName(e.key); err != nil {
			return p.errf(e.kn, key, "%v: a host's name is a host name (letters, digits, '-', '_', '.')", err)
		}
		if e.v.Kind == yaml.ScalarNode && e.v.Tag == "!!null" {
			m.Hosts[e.key] = h
			continue
		}
		fs, err := p.mapping(e.v, key)
		if err != nil {
			return err
		}
		for _, f := range fs {
			v, err := p.scalar(f, key+"."+f.key)
			if err != nil {
				return err
			}
			switch f.key {
			case "addr":
				if v == "" {
					return p.errf(f.v, key+".addr", "empty")
				}
				// A host name or an IP address, never a flag: it becomes a
				// test's destination (package testline).
				if d, err := testline.ParseDest(v); err != nil || d.Port != 0 {
					return p.errf(f.v, key+".addr", "%q: want a host name or an IP address (the port goes in port)", v)
				}
				h.Addr = v
			case "port":
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 || n > 65535 {
					return p.errf(f.v, key+".port", "%q: want 1 to 65535", v)
				}
				h.Port = n
			default:
				return p.errf(f.kn, key+"."+f.key, "unknown key (want addr, port)")
			}
		}
		m.Hosts[e.key] = h
	}
	return nil
}

func (p *parser) group(e entry) (*rawGroup, error) {
	key := "groups." + e.key
	if err := schedule.CheckName(e.key); err != nil {
		return nil, p.errf(e.kn, key, "a group's name: %v", err)
	}
	fs, err := p.mapping(e.v, key)
	if err != nil {
		return nil, err
	}
	if len(fs) != 1 {
		return nil, p.errf(e.v, key, "want one of mesh, star, pairs, sampled")
	}
	f := fs[0]
	g := &rawGroup{node: f.v, kind: f.key}
	key += "." + f.key
	switch f.key {
	case "mesh":
		if g.members, err = p.strings(f.v, key); err != nil {
			return nil, err
		}
	case "star":
		cs, err := p.mapping(f.v, key)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			switch c.key {
			case "center":
				if g.center, err = p.scalar(c, key+".center"); err != nil {
					return nil, err
				}
			case "members":
				if g.members, err = p.strings(c.v, key+".members"); err != nil {
					return nil, err
				}
			default:
				return nil, p.errf(c.kn, key+"."+c.key, "unknown key (want center, members)")
			}
		}
		if g.center == "" {
			return nil, p.errf(f.v, key+".center", "missing")
		}
	case "pairs":
		if f.v.Kind != yaml.SequenceNode {
			return nil, p.errf(f.v, key, "want a list of [SOURCE, DEST]")
		}
		for _, pn := range f.v.Content {
			two, err := p.strings(pn, key)
			if err != nil || len(two) != 2 {
				return nil, p.errf(pn, key, "want [SOURCE, DEST]")
			}
			g.pairs = append(g.pairs, Pair{two[0], two[1]})
		}
	case "sampled":
		cs, err := p.mapping(f.v, key)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			switch c.key {
			case "hosts":
				if g.members, err = p.strings(c.v, key+".hosts"); err != nil {
					return nil, err
				}
			case "partners":
				v, err := p.scalar(c, key+".partners")
				if err != nil {
					return nil, err
				}
				if g.partners, err = strconv.Atoi(v); err != nil || g.partners < 1 {
					return nil, p.errf(c.v, key+".partners", "%q: want a count of 1 or more", v)
				}
			default:
				return nil, p.errf(c.kn, key+"."+c.key, "unknown key (want hosts, partners)")
			}
		}
		if g.partners == 0 {
			return nil, p.errf(f.v, key+".partners", "missing")
		}
	default:
		return nil, p.errf(f.kn, key, "unknown group kind (want mesh, star, pairs, sampled)")
	}
	return g, nil
}

// expandGroups turns each group into its ordered pairs. A member names a
// host or another group (whose hosts it stands for); a cycle of such
// references is an error.
func (p *parser) expandGroups(m *Mesh, groups map[string]*rawGroup) error {
	hostsOf := map[string][]string{}
	state := map[string]int{} // 1: being expanded, 2: done
	// path is the chain of groups that led here; its last one refers to name.
	var members func(name string, from *yaml.Node, path []string) ([]string, error)
	members = func(name string, from *yaml.Node, path []string) ([]string, error) {
		if _, ok := m.Hosts[name]; ok {
			return []string{name}, nil
		}
		g, ok := groups[name]
		if !ok {
			return nil, p.errf(from, "groups."+path[len(path)-1], "unknown host or group %q", name)
		}
		switch state[name] {
		case 1:
			return nil, p.errf(from, "groups."+path[len(path)-1], "cycle of group references: %s", strings.Join(append(path, name), " → "))
		case 2:
			return hostsOf[name], nil
		}
		state[name] = 1
		var out []string
		add := func(ns ...string) error {
			for _, n := range ns {
				hs, err := members(n, g.node, append(path, name))
				if err != nil {
					return err
				}
				out = append(out, hs...)
			}
			return nil
		}
		var err error
		switch g.kind {
		case "pairs":
			for _, pr := range g.pairs {
				if err = add(pr.Source, pr.Dest); err != nil {
					break
				}
			}
		case "star":
			err = add(append([]string{g.center}, g.members...)...)
		default:
			err = add(g.members...)
		}
		if err != nil {
			return nil, err
		}
		state[name] = 2
		hostsOf[name] = dedup(out)
		return hostsOf[name], nil
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		g := groups[name]
		if _, err := members(name, g.node, nil); err != nil {
			return err
		}
		var pairs []Pair
		switch g.kind {
		case "mesh":
			hs := hostsOf[name]
			if n := len(hs); n*(n-1) > MaxTasks {
				return p.errf(g.node, "groups."+name, "a full mesh of %d hosts is %d ordered pairs, over the limit of %d", n, n*(n-1), MaxTasks)
			}
			pairs = make([]Pair, 0, len(hs)*(len(hs)-1))
			for _, a := range hs {
				for _, b := range hs {
					if a != b {
						pairs = append(pairs, Pair{a, b})
					}
				}
			}
		case "star":
			// The center's own members are leaves; the center itself a host.
			if _, ok := m.Hosts[g.center]; !ok {
				return p.errf(g.node, "groups."+name+".star.center", "unknown host %q", g.center)
			}
			for _, h := range hostsOf[name] {
				if h != g.center {
					pairs = append(pairs, Pair{g.center, h}, Pair{h, g.center})
				}
			}
		case "pairs":
			for _, pr := range g.pairs {
				for _, h := range []string{pr.Source, pr.Dest} {
					if _, ok := m.Hosts[h]; !ok {
						return p.errf(g.node, "groups."+name+".pairs", "unknown host %q (a pair names hosts)", h)
					}
				}
				if pr.Source == pr.Dest {
					return p.errf(g.node, "groups."+name+".pairs", "%s to itself", pr.Source)
				}
				pairs = append(pairs, pr)
			}
		case "sampled":
			// Its pairs are not made: a schedule over it is a few rotating
			// tasks per host (sampled.go).
			sm := sample(m.Name, name, hostsOf[name], g.partners)
			switch {
			case sm.tasks() > MaxTasks:
				return p.errf(g.node, "groups."+name, "a sampled group of %d hosts with %d partners is %d tasks a schedule (%d a host), over the limit of %d",
					sm.hosts(), g.partners, sm.tasks(), sm.slots, MaxTasks)
			case sm.rotation > schedule.MaxDests:
				return p.errf(g.node, "groups."+name, "a sampled group of %d hosts with %d partners takes %d periods to cover its pairs, a task's list of %d destinations, over the limit of %d",
					sm.hosts(), g.partners, sm.rotation, sm.rotation, schedule.MaxDests)
			}
			m.sampled[name] = sm
		}
		if g.kind == "pairs" {
			// A mesh's and a star's pairs are distinct by construction
			// (their hosts are); a list of pairs may repeat one.
			pairs = dedupPairs(pairs)
		}
		m.pairs[name] = pairs
	}
	return nil
}

func dedup(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func dedupPairs(in []Pair) []Pair {
	seen := map[Pair]bool{}
	var out []Pair
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Pairs are a group's ordered pairs (a sampled group's, made here: all
// of them, over its rotation).
func (m *Mesh) Pairs(group string) []Pair {
	if sm := m.sampled[group]; sm != nil {
		return sm.pairs()
	}
	return m.pairs[group]
}

// reserveMargin is added to a test's time for its set-up and its report.
const reserveMargin = 2 * time.Second

func (p *parser) test(e entry) (Test, error) {
	key := "tests." + e.key
	if err := schedule.CheckName(e.key); err != nil {
		return Test{}, p.errf(e.kn, key, "a test's name: %v", err)
	}
	t := Test{Name: e.key, Class: schedule.Exclusive}
	var testNode *yaml.Node
	classGiven := false
	fs, err := p.mapping(e.v, key)
	if err != nil {
		return t, err
	}
	for _, f := range fs {
		fk := key + "." + f.key
		switch f.key {
		case "test":
			v, err := p.scalar(f, fk)
			if err != nil {
				return t, err
			}
			if t.Args, err = p.testLine(v); err != nil {
				return t, p.errf(f.v, fk, "%v", err)
			}
			testNode = f.v
		case "class":
			v, err := p.scalar(f, fk)
			if err != nil {
				return t, err
			}
			if t.Class, err = schedule.ParseClass(v); err != nil {
				return t, p.errf(f.v, fk, "%v", err)
			}
			classGiven = true
		case "reserve":
			if t.Reserve, err = p.duration(f, fk); err != nil {
				return t, err
			}
			t.ReserveGiven = t.Reserve > 0
		case "thresholds":
			if t.Thresholds, err = p.thresholds(f.v, fk); err != nil {
				return t, err
			}
		default:
			return t, p.errf(f.kn, fk, "unknown key (want test, class, reserve, thresholds)")
		}
	}
	if len(t.Args) == 0 {
		return t, p.errf(e.v, key+".test", "missing")
	}
	if !classGiven && (t.Args[0] == "trace" || t.Args[0] == "ping" || t.Args[0] == "tcp-connect") {
		// A trace's few probes disturb no throughput test, and a path is
		// worth most when recorded beside one; so are ping's and
		// tcp-connect's.
		t.Class = schedule.Background
	}
	if t.Reserve == 0 {
		if t.Reserve, err = ReserveFor(t.Args); err != nil {
			return t, p.errf(testNode, key+".test", "%v", err)
		}
	}
	return t, nil
}

// ReserveFor is how long a run of a test line holds its hosts by
// default: the test's length as its model tells it (-O, -n at a rate,
// rr's sizes × -t, udpmon's grid) and a margin for its set-up and
// report. A test whose length its flags don't tell (-n as fast as the
// path allows) needs its reservation given.
func ReserveFor(args []string) (time.Duration, error) {
	t, err := measure.ParseLine(args)
	if err != nil {
		return 0, err
	}
	d, ok := t.Duration()
	if !ok {
		return 0, errors.New("its length can't be told from its flags (-n without a rate, or rr --count without -t or --interval): give reserve")
	}
	return d + reserveMargin, nil
}

// testLine splits a test line into words and reads it as the test's
// command would (package measure): a measurement command and its
// measurement flags only, with values the command accepts.
func (p *parser) testLine(v string) ([]string, error) {
	_, words, err := measure.ParseLineText(v)
	if err != nil {
		return nil, err
	}
	return words, nil
}

func (p *parser) thresholds(n *yaml.Node, key string) (schedule.Thresholds, error) {
	var th schedule.Thresholds
	fs, err := p.mapping(n, key)
	if err != nil {
		return th, err
	}
	for _, f := range fs {
		fk := key + "." + f.key
		v, err := p.scalar(f, fk)
		if err != nil {
			return th, err
		}
		num := func() (float64, error) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || x < 0 {
				return 0, p.errf(f.v, fk, "%q: want a non-negative number", v)
			}
			return x, nil
		}
		rate := func() (float64, error) {
			x, err := units.ParseRate(v)
			if err != nil || x < 0 {
				return 0, p.errf(f.v, fk, "%q: want a rate such as 500M (bits per second)", v)
			}
			return x, nil
		}
		switch f.key {
		case "goodput_amber":
			th.GoodputAmberBps, err = rate()
		case "goodput_red":
			th.GoodputRedBps, err = rate()
		case "loss_amber":
			th.LossAmberPct, err = num()
		case "loss_red":
			th.LossRedPct, err = num()
		case "rtt_amber_ms":
			th.RTTAmberMs, err = num()
		case "rtt_red_ms":
			th.RTTRedMs, err = num()
		case "stale_intervals":
			var x float64
			x, err = num()
			th.StaleIntervals = int(x)
		default:
			return th, p.errf(f.kn, fk, "unknown key (want goodput_amber, goodput_red, loss_amber, loss_red, rtt_amber_ms, rtt_red_ms, stale_intervals)")
		}
		if err != nil {
			return th, err
		}
	}
	return th, nil
}

func (p *parser) schedule(m *Mesh, e entry) (Schedule, error) {
	s := Schedule{key: e.key, line: e.v.Line}
	at := map[string]*yaml.Node{} // each key's value, for errors about it
	fs, err := p.mapping(e.v, e.key)
	if err != nil {
		return s, err
	}
	for _, f := range fs {
		fk := e.key + "." + f.key
		v, err := p.scalar(f, fk)
		if err != nil {
			return s, err
		}
		at[f.key] = f.v
		switch f.key {
		case "group":
			if _, ok := m.pairs[v]; !ok {
				return s, p.errf(f.v, fk, "unknown group %q", v)
			}
			s.Group = v
		case "test":
			if _, ok := m.Tests[v]; !ok {
				return s, p.errf(f.v, fk, "unknown test %q", v)
			}
			s.Test = v
		case "repeat":
			s.Repeat, err = p.duration(f, fk)
		case "slip":
			s.Slip, err = p.duration(f, fk)
		case "random_slip":
			s.RandomSlip, err = p.duration(f, fk)
		case "start", "until":
			t, perr := time.Parse(time.RFC3339, v)
			if perr != nil {
				return s, p.errf(f.v, fk, "%q: want an RFC 3339 instant such as 2026-03-01T00:00:00Z", v)
			}
			if f.key == "start" {
				s.Start = t.UTC()
			} else {
				s.Until = t.UTC()
			}
		case "max_runs":
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 0 {
				return s, p.errf(f.v, fk, "%q: want a count", v)
			}
			s.MaxRuns = n
		default:
			return s, p.errf(f.kn, fk, "unknown key (want group, test, repeat, slip, random_slip, start, until, max_runs)")
		}
		if err != nil {
			return s, err
		}
	}
	switch {
	case s.Group == "":
		return s, p.errf(e.v, e.key+".group", "missing")
	case s.Test == "":
		return s, p.errf(e.v, e.key+".test", "missing")
	}
	if s.Start.IsZero() {
		// Aligned to the epoch: every host's runs fall on the same
		// instants, and the file says the same thing each time it is read.
		s.Start = time.Unix(0, 0).UTC()
	}
	// The rules a task checks, reported at the schedule's line.
	probe := schedule.Task{Name: s.Test, Source: "a", Dest: "b", Args: []string{"client"}, Duration: time.Second,
		Start: s.Start, Repeat: s.Repeat, Slip: s.Slip, RandomSlip: s.RandomSlip, Until: s.Until, MaxRuns: s.MaxRuns}
	if err := probe.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":")
		key = strings.ReplaceAll(key, "-", "_")
		n := at[key]
		if n == nil {
			n = e.v
		}
		return s, p.errf(n, e.key+"."+key, "%s", strings.TrimSpace(strings.TrimPrefix(err.Error(), key+":")))
	}
	if s.Repeat > 0 && m.Tests[s.Test].Reserve > s.Repeat {
		return s, p.errf(at["repeat"], e.key+".repeat", "%v is shorter than one run of %s (%v)", s.Repeat, s.Test, m.Tests[s.Test].Reserve)
	}
	if sm := m.sampled[s.Group]; sm != nil {
		// A pair of a sampled group runs once every rotation periods.
		switch {
		case s.Repeat == 0:
			return s, p.errf(e.v, e.key+".repeat", "missing: group %s is sampled, so its pairs take turns period by period", s.Group)
		case s.Repeat > maxTaskRepeat/time.Duration(sm.rotation):
			return s, p.errf(at["repeat"], e.key+".repeat", "%v × the %d periods group %s takes to cover its pairs is over %v", s.Repeat, sm.rotation, s.Group, maxTaskRepeat)
		}
	}
	return s, nil
}

// maxTaskRepeat bounds a sampled pair's repeat (the schedule's × its
// group's rotation), far from a time.Duration's overflow.
const maxTaskRepeat = 100 * 366 * 24 * time.Hour

// Tasks expands the mesh into tasks: one per schedule and ordered pair,
// with IDs from the file's name, the schedule and the pair; over a
// sampled group, one rotating task per schedule, source and slot, whose
// runs go to its partners in their turns (sampled.go).
func (m *Mesh) Tasks() []*schedule.Task {
	n := 0
	for _, s := range m.Schedules {
		if sm := m.sampled[s.Group]; sm != nil {
			n += sm.tasks()
		} else {
			n += len(m.pairs[s.Group])
		}
	}
	out := make([]*schedule.Task, 0, n)
	endpoints := make(map[string]string, len(m.Hosts))
	for name, h := range m.Hosts {
		endpoints[name] = h.Endpoint()
	}
	for _, s := range m.Schedules {
		t := m.Tests[s.Test]
		// One test's tasks share its words (clipped: an append copies).
		args := slices.Clip(t.Args)
		// and its direction, read once (the line was checked when read).
		dir := (&schedule.Task{Args: args}).Direction()
		// task is the schedule's task from source to dest; its ID names
		// the pair, or (key) a sampled group's source and slot.
		task := func(source, dest, key string) *schedule.Task {
			tk := &schedule.Task{
				ID:   schedule.DefineID(m.Name, s.Group+"/"+s.Test, source, key),
				Name: s.Test, Source: source, Dest: dest, DestAddr: endpoints[dest],
				Args: args, Class: t.Class, Duration: t.Reserve,
				Start: s.Start, Repeat: s.Repeat, Slip: s.Slip, RandomSlip: s.RandomSlip, Until: s.Until, MaxRuns: s.MaxRuns,
				Origin: m.Name, Group: s.Group, Thresholds: t.Thresholds,
			}
			tk.SetDirection(dir)
			return tk
		}
		if sm := m.sampled[s.Group]; sm != nil {
			out = append(out, sm.scheduleTasks(s, t, endpoints, task)...)
			continue
		}
		pairs := m.pairs[s.Group]
		for i, pr := range pairs {
			tk := task(pr.Source, pr.Dest, pr.Dest)
			// Exclusive runs of one schedule are spread evenly over its
			// period rather than all planned at one instant, where all but
			// one would wait for the others.
			if t.Class == schedule.Exclusive && s.Repeat > 0 {
				tk.Start = tk.Start.Add(time.Duration(i) * (s.Repeat / time.Duration(len(pairs))).Truncate(time.Millisecond))
			}
			out = append(out, tk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
