package psconfig

import (
	"encoding/json"
	"fmt"
)

// group is a template's group, its members resolved to mesh hosts.
type group struct {
	name string
	kind string // mesh, disjoint or list
	// pairs are the ordered pairs (address[0], address[1]) the group
	// gives a two-address test, after excludes; list groups have none.
	pairs [][2]string
	// members are the group's hosts in order (a list group's each alone).
	members []string
	// whole: pairs are every ordered pair of members, so the mesh file
	// can say "mesh: [members]".
	whole bool
}

type selector struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Class    string `json:"class"`
	Disabled bool   `json:"disabled"`
}

// resolve turns selectors into mesh hosts; those it can't are warned of.
func (c *converter) resolve(where string, sels []selector, defaultLabel string) []string {
	var out []string
	seen := map[string]bool{}
	var expanded []selector
	for _, s := range sels {
		if s.Class == "" {
			expanded = append(expanded, s)
			continue
		}
		for _, n := range c.classMembers(s.Class) {
			expanded = append(expanded, selector{Name: n, Disabled: s.Disabled})
		}
	}
	for _, s := range expanded {
		if s.Disabled {
			continue
		}
		a, ok := c.addrs[s.Name]
		if !ok {
			c.w.linef("%s: the address %q is not in the template's addresses (or was left out); left out of the group", where, s.Name)
			continue
		}
		if a.disabled {
			continue
		}
		label := s.Label
		if label == "" {
			label = defaultLabel
		}
		h, ok := c.meshHost(a, label)
		if !ok {
			// pSConfig falls back to the address when it has no such label.
			h, _ = c.meshHost(a, "")
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// readGroup reads one group; nil when it gives no pairs or members.
func (c *converter) readGroup(name string, raw json.RawMessage) *group {
	where := "groups." + name
	var g struct {
		Type           string          `json:"type"`
		Addresses      []selector      `json:"addresses"`
		A              []selector      `json:"a-addresses"`
		B              []selector      `json:"b-addresses"`
		Unidirectional bool            `json:"unidirectional"`
		ExcludesSelf   string          `json:"excludes-self"`
		Excludes       []excludePair   `json:"excludes"`
		DefaultLabel   string          `json:"default-address-label"`
		Meta           json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		c.w.linef("%s: %v; left out", where, err)
		return nil
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	for k := range fields {
		switch k {
		case "type", "addresses", "a-addresses", "b-addresses", "unidirectional", "excludes-self", "excludes", "default-address-label":
		case "_meta":
			c.w.dropped("groups.*._meta", name, "no mesh equivalent")
		default:
			c.w.dropped("groups.*."+k, name, "not a pSConfig key")
		}
	}
	out := &group{name: name, kind: g.Type}
	sameMachine := func(a, b string) bool {
		switch g.ExcludesSelf {
		case "disabled":
			return a == b // a host never tests to itself in a mesh
		case "address":
			return a == b || c.file.Hosts[a].Addr == c.file.Hosts[b].Addr
		default: // "host", pSConfig's default
			return a == b || c.origin[a] == c.origin[b]
		}
	}
	if g.ExcludesSelf == "disabled" {
		c.w.dropped("excludes-self: disabled", name, "a mesh never tests a host to itself")
	}
	excluded := map[[2]string]bool{}
	for i, e := range g.Excludes {
		local := c.resolve(fmt.Sprintf("%s.excludes[%d]", where, i), []selector{e.Local}, g.DefaultLabel)
		targets := c.resolve(fmt.Sprintf("%s.excludes[%d]", where, i), e.Targets, g.DefaultLabel)
		for _, l := range local {
			for _, t := range targets {
				excluded[[2]string{l, t}] = true
			}
		}
	}
	add := func(a, b string) {
		if sameMachine(a, b) || excluded[[2]string{a, b}] {
			return
		}
		out.pairs = append(out.pairs, [2]string{a, b})
	}
	switch g.Type {
	case "mesh":
		out.members = c.resolve(where, g.Addresses, g.DefaultLabel)
		for _, a := range out.members {
			for _, b := range out.members {
				add(a, b)
			}
		}
		n := len(out.members)
		out.whole = len(out.pairs) == n*(n-1)
	case "disjoint":
		as := c.resolve(where+".a-addresses", g.A, g.DefaultLabel)
		bs := c.resolve(where+".b-addresses", g.B, g.DefaultLabel)
		for _, a := range as {
			for _, b := range bs {
				add(a, b)
			}
		}
		if !g.Unidirectional {
			for _, b := range bs {
				for _, a := range as {
					add(b, a)
				}
			}
		}
		out.members = append(as, bs...)
	case "list":
		out.members = c.resolve(where, g.Addresses, g.DefaultLabel)
		if len(out.members) == 0 {
			c.w.linef("%s: no usable addresses; left out", where)
			return nil
		}
		return out
	default:
		c.w.linef("%s: group type %q is not mesh, disjoint or list; left out", where, g.Type)
		return nil
	}
	if len(out.pairs) == 0 {
		c.w.linef("%s: gives no pair of two hosts; left out", where)
		return nil
	}
	return out
}

type excludePair struct {
	Local   selector   `json:"local-address"`
	Targets []selector `json:"target-addresses"`
}
