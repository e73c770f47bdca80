package mesh

import (
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// rawGroup is a group as the file says it, before its members are
// expanded into hosts.
type rawGroup struct {
	node     *yaml.Node
	kind     string // mesh, star, pairs, sampled
	members  []string
	center   string
	pairs    []Pair
	partners int // sampled: partners per host per period
}

// names is a list of names (hosts or groups).
func (p *parser) names(n *yaml.Node, key string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.Errorf(n, key, "want a list")
	}
	var out []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.Value == "" {
			return nil, p.Errorf(c, key, "want a name")
		}
		out = append(out, c.Value)
	}
	return out, nil
}

// group reads one group: its kind and its members.
func (p *parser) group(e yamlfile.Entry) (*rawGroup, error) {
	key := "groups." + e.Key
	if err := schedule.CheckName(e.Key); err != nil {
		return nil, p.Errorf(e.KeyNode, key, "a group's name: %v", err)
	}
	fs, err := p.Mapping(e.Value, key, "mesh", "star", "pairs", "sampled")
	if err != nil {
		return nil, err
	}
	if len(fs) != 1 {
		return nil, p.Errorf(e.Value, key, "want one of mesh, star, pairs, sampled")
	}
	f := fs[0]
	g := &rawGroup{node: f.Value, kind: f.Key}
	key += "." + f.Key
	switch f.Key {
	case "mesh":
		if g.members, err = p.names(f.Value, key); err != nil {
			return nil, err
		}
	case "star":
		cs, err := p.Mapping(f.Value, key, "center", "members")
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			switch c.Key {
			case "center":
				if g.center, err = p.Scalar(c.Value, key+".center"); err != nil {
					return nil, err
				}
			case "members":
				if g.members, err = p.names(c.Value, key+".members"); err != nil {
					return nil, err
				}
			}
		}
		if g.center == "" {
			return nil, p.Errorf(f.Value, key+".center", "missing")
		}
	case "pairs":
		if f.Value.Kind != yaml.SequenceNode {
			return nil, p.Errorf(f.Value, key, "want a list of [SOURCE, DEST]")
		}
		for _, pn := range f.Value.Content {
			two, err := p.names(pn, key)
			if err != nil || len(two) != 2 {
				return nil, p.Errorf(pn, key, "want [SOURCE, DEST]")
			}
			g.pairs = append(g.pairs, Pair{two[0], two[1]})
		}
	case "sampled":
		cs, err := p.Mapping(f.Value, key, "hosts", "partners")
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			switch c.Key {
			case "hosts":
				if g.members, err = p.names(c.Value, key+".hosts"); err != nil {
					return nil, err
				}
			case "partners":
				v, err := p.Scalar(c.Value, key+".partners")
				if err != nil {
					return nil, err
				}
				if g.partners, err = strconv.Atoi(v); err != nil || g.partners < 1 {
					return nil, p.Errorf(c.Value, key+".partners", "%q: want a count of 1 or more", v)
				}
			}
		}
		if g.partners == 0 {
			return nil, p.Errorf(f.Value, key+".partners", "missing")
		}
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
			return nil, p.Errorf(from, "groups."+path[len(path)-1], "unknown host or group %q", name)
		}
		switch state[name] {
		case 1:
			return nil, p.Errorf(from, "groups."+path[len(path)-1], "cycle of group references: %s", strings.Join(append(path, name), " → "))
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
				return p.Errorf(g.node, "groups."+name, "a full mesh of %d hosts is %d ordered pairs, over the limit of %d", n, n*(n-1), MaxTasks)
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
				return p.Errorf(g.node, "groups."+name+".star.center", "unknown host %q", g.center)
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
						return p.Errorf(g.node, "groups."+name+".pairs", "unknown host %q (a pair names hosts)", h)
					}
				}
				if pr.Source == pr.Dest {
					return p.Errorf(g.node, "groups."+name+".pairs", "%s to itself", pr.Source)
				}
				pairs = append(pairs, pr)
			}
		case "sampled":
			// Its pairs are not made: a schedule over it is a few rotating
			// tasks per host (sampled.go).
			sm := sample(m.Name, name, hostsOf[name], g.partners)
			switch {
			case sm.tasks() > MaxTasks:
				return p.Errorf(g.node, "groups."+name, "a sampled group of %d hosts with %d partners is %d tasks a schedule (%d a host), over the limit of %d",
					sm.hosts(), g.partners, sm.tasks(), sm.slots, MaxTasks)
			case sm.rotation > schedule.MaxDests:
				return p.Errorf(g.node, "groups."+name, "a sampled group of %d hosts with %d partners takes %d periods to cover its pairs, a task's list of %d destinations, over the limit of %d",
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
