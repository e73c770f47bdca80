package psconfig

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// File is a mesh file as this importer writes it (docs/daemon.md, "The
// mesh file"): only the forms it needs.
type File struct {
	Name      string
	Hosts     map[string]Host
	Groups    map[string]Group
	Tests     map[string]Test
	Schedules []Schedule
}

// Host is a mesh host: where the others reach it.
type Host struct {
	Addr string
}

// Group is either every ordered pair of Mesh's hosts, or exactly Pairs.
type Group struct {
	Mesh  []string
	Pairs [][2]string
}

// Test is a mesh test: its line (without the destination) and class.
type Test struct {
	Line  string
	Class string // "" (the test's own default) or background
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
}

// YAML renders the file with its keys in a fixed order, so that the
// same template always gives the same bytes.
func (f *File) YAML() ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(m *yaml.Node, k string, v *yaml.Node) {
		m.Content = append(m.Content, str(k), v)
	}
	add(doc, "name", str(f.Name))

	hosts := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range sortedKeys(f.Hosts) {
		h := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		add(h, "addr", str(f.Hosts[name].Addr))
		add(hosts, name, h)
	}
	add(doc, "hosts", hosts)

	groups := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range sortedKeys(f.Groups) {
		g := f.Groups[name]
		gn := &yaml.Node{Kind: yaml.MappingNode}
		if g.Mesh != nil {
			add(gn, "mesh", strs(g.Mesh, yaml.FlowStyle))
		} else {
			ps := &yaml.Node{Kind: yaml.SequenceNode}
			for _, p := range g.Pairs {
				ps.Content = append(ps.Content, strs(p[:], yaml.FlowStyle))
			}
			add(gn, "pairs", ps)
		}
		add(groups, name, gn)
	}
	add(doc, "groups", groups)

	tests := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range sortedKeys(f.Tests) {
		t := f.Tests[name]
		tn := &yaml.Node{Kind: yaml.MappingNode}
		add(tn, "test", str(t.Line))
		if t.Class != "" {
			add(tn, "class", str(t.Class))
		}
		add(tests, name, tn)
	}
	add(doc, "tests", tests)

	scheds := &yaml.Node{Kind: yaml.SequenceNode}
	for _, s := range f.Schedules {
		sn := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		add(sn, "group", str(s.Group))
		add(sn, "test", str(s.Test))
		add(sn, "repeat", str(duration(s.Repeat)))
		if s.Slip > 0 {
			add(sn, "slip", str(duration(s.Slip)))
		}
		if s.RandomSlip > 0 {
			add(sn, "random_slip", str(duration(s.RandomSlip)))
		}
		if !s.Start.IsZero() {
			add(sn, "start", str(s.Start.UTC().Format(time.RFC3339)))
		}
		if !s.Until.IsZero() {
			add(sn, "until", str(s.Until.UTC().Format(time.RFC3339)))
		}
		if s.MaxRuns > 0 {
			add(sn, "max_runs", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(s.MaxRuns)})
		}
		scheds.Content = append(scheds.Content, sn)
	}
	add(doc, "schedules", scheds)

	var b bytes.Buffer
	b.WriteString("# Imported from a pSConfig template by `wireperf mesh import --psconfig`.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return nil, fmt.Errorf("mesh file: %v", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("mesh file: %v", err)
	}
	return b.Bytes(), nil
}

// str is a string scalar, quoted by the encoder where YAML would read it
// as something else (a number, a boolean, a null).
func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func strs(ss []string, style yaml.Style) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: style}
	for _, s := range ss {
		n.Content = append(n.Content, str(s))
	}
	return n
}

// duration is d as a mesh file writes it: "4h", "1h30m", "36m", "90s",
// without Go's trailing zero units ("4h0m0s").
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
