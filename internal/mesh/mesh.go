// Package mesh reads a mesh file (hosts, groups of them, tests and the
// schedules that run tests over groups) and expands it into scheduled
// tasks, one per ordered pair and schedule (over a sampled group, a few
// rotating tasks per host instead). Expansion is a pure function
// of the file: the same file always gives the same tasks, with the same
// IDs, so that applying it twice changes nothing.
//
// The file is read by package yamlfile, under the limits below; the
// parts of a file are read in their own files here (hosts.go, groups.go,
// tests.go, schedules.go), a group's pairs made in groups.go and a
// sampled group's turns in sampled.go, and the tasks in tasks.go.
package mesh

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// DefaultPort is where a host's daemon serves tests unless the file says.
const DefaultPort = 5201

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
	// length and the margin (schedule.ReserveOf).
	ReserveGiven bool
	Thresholds   schedule.Thresholds
	// test is Args parsed, once, when the file was read: its tasks and
	// its reservation read it.
	test measure.Test
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

	key          string // schedules[i], and its position: where errors about it point
	line, column int
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
	MaxDepth     = 16      // mappings and lists inside one another (a file needs 5)
	MaxHosts     = 2000
	MaxTasks     = 250000  // tasks the file expands to, over every schedule: a full mesh of 500 hosts
	MaxPairs     = 4000000 // ordered pairs the tasks test, over every schedule: four schedules over a sampled group of 1,000 hosts
)

// Limits are the file's limits as the reader takes them.
var Limits = yamlfile.Limits{Bytes: MaxFileSize, Nodes: MaxNodes, ValueLen: MaxScalarLen, Depth: MaxDepth}

// Parse reads and checks a mesh file. Any error is a *yamlfile.Error.
func Parse(file string, data []byte) (*Mesh, error) {
	doc, err := yamlfile.Read(file, data, Limits)
	if err != nil {
		return nil, err
	}
	if doc.Root == nil {
		return nil, doc.Errorf(nil, "", "empty file")
	}
	return (&parser{doc}).parse()
}

// parser reads one file's parts; its errors are at their nodes.
type parser struct{ *yamlfile.Doc }

func (p *parser) parse() (*Mesh, error) {
	root := p.Root
	top, err := p.Mapping(root, "", "name", "hosts", "groups", "tests", "schedules")
	if err != nil {
		return nil, err
	}
	m := &Mesh{Name: filepath.Base(p.File), Hosts: map[string]Host{}, Tests: map[string]Test{}, pairs: map[string][]Pair{}, sampled: map[string]*sampling{}, file: p.File}
	groups := map[string]*rawGroup{}
	var scheds []yamlfile.Entry
	for _, e := range top {
		switch e.Key {
		case "name":
			if m.Name, err = p.Scalar(e.Value, "name"); err != nil {
				return nil, err
			}
		case "hosts":
			if err := p.hosts(m, e.Value); err != nil {
				return nil, err
			}
		case "groups":
			es, err := p.Mapping(e.Value, "groups")
			if err != nil {
				return nil, err
			}
			for _, g := range es {
				rg, err := p.group(g)
				if err != nil {
					return nil, err
				}
				groups[g.Key] = rg
			}
		case "tests":
			es, err := p.Mapping(e.Value, "tests")
			if err != nil {
				return nil, err
			}
			for _, t := range es {
				tt, err := p.test(t)
				if err != nil {
					return nil, err
				}
				m.Tests[t.Key] = tt
			}
		case "schedules":
			if e.Value.Kind != yaml.SequenceNode {
				return nil, p.Errorf(e.Value, "schedules", "want a list")
			}
			for i, n := range e.Value.Content {
				scheds = append(scheds, yamlfile.Entry{Key: fmt.Sprintf("schedules[%d]", i), Value: n})
			}
		}
	}
	if err := schedule.CheckName(m.Name); err != nil {
		return nil, p.Errorf(root, "name", "%q: %v", m.Name, err)
	}
	if len(m.Hosts) == 0 {
		return nil, p.Errorf(root, "hosts", "no hosts")
	}
	for name := range groups {
		if _, clash := m.Hosts[name]; clash {
			return nil, p.Errorf(groups[name].node, "groups."+name, "a host has the same name")
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
			return nil, p.Errorf(e.Value, e.Key, "test %s on group %s is scheduled twice", s.Test, s.Group)
		}
		seen[k] = true
		m.Schedules = append(m.Schedules, s)
		n, np := len(m.pairs[s.Group]), len(m.pairs[s.Group])
		if sm := m.sampled[s.Group]; sm != nil {
			n, np = sm.tasks(), sm.pairCount()
		}
		if tasks += n; tasks > MaxTasks {
			return nil, p.Errorf(e.Value, e.Key, "the schedules so far make %d tasks, over the limit of %d", tasks, MaxTasks)
		}
		if pairs += np; pairs > MaxPairs {
			return nil, p.Errorf(e.Value, e.Key, "the schedules so far test %d ordered pairs, over the limit of %d", pairs, MaxPairs)
		}
	}
	return m, nil
}

// duration is a value that is a duration, such as 30s or 4h.
func (p *parser) duration(e yamlfile.Entry, key string) (time.Duration, error) {
	s, err := p.Scalar(e.Value, key)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, p.Errorf(e.Value, key, "%q: want a duration such as 30s or 4h", s)
	}
	return d, nil
}
