package psconfig

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
)

// class is an address class: the template's addresses that its match
// filter takes and its exclude filter doesn't (pSConfig's
// "current-config" data source; the only one a file can be read with).
type class struct {
	match, exclude json.RawMessage
}

type filter struct {
	Type    string            `json:"type"`
	Tag     string            `json:"tag"`
	Netmask string            `json:"netmask"`
	Version int               `json:"ip-version"`
	Class   string            `json:"class"`
	Filters []json.RawMessage `json:"filters"`
	Filter  json.RawMessage   `json:"filter"`
}

// readClasses reads the template's address classes; one it can't
// evaluate is warned of and selects nothing.
func (c *converter) readClasses(raw map[string]json.RawMessage) {
	c.classes = map[string]*class{}
	for _, name := range sortedKeys(raw) {
		var cs struct {
			DataSource struct {
				Type string `json:"type"`
			} `json:"data-source"`
			Match   json.RawMessage `json:"match-filter"`
			Exclude json.RawMessage `json:"exclude-filter"`
		}
		if err := json.Unmarshal(raw[name], &cs); err != nil || cs.DataSource.Type != "current-config" {
			c.w.dropped("address classes", "address-classes."+name, "only classes over the template's own addresses (data-source current-config) are evaluated; this one selects nothing")
			continue
		}
		c.classes[name] = &class{match: cs.Match, exclude: cs.Exclude}
	}
}

// classMembers is the names of the addresses a class selects, in order.
func (c *converter) classMembers(name string) []string {
	cl, ok := c.classes[name]
	if !ok {
		c.w.dropped("address classes", "class "+name, "not a class the template defines (or one left out); it selects nothing")
		return nil
	}
	var out []string
	for _, n := range sortedKeys(c.addrs) {
		a := c.addrs[n]
		in, err := c.matches(cl.match, a, 0)
		if err == nil && in && len(cl.exclude) > 0 {
			var out bool
			out, err = c.matches(cl.exclude, a, 0)
			in = !out
		}
		if err != nil {
			c.w.dropped("address class filters", "class "+name, fmt.Sprintf("%v; the class selects nothing", err))
			return nil
		}
		if in {
			out = append(out, n)
		}
	}
	return out
}

// matches evaluates one filter on one address. depth bounds nesting (and
// a class naming itself).
func (c *converter) matches(raw json.RawMessage, a *address, depth int) (bool, error) {
	if depth > 16 {
		return false, fmt.Errorf("filters nested deeper than 16")
	}
	if len(raw) == 0 {
		return true, nil // no match filter: every address
	}
	var f filter
	if err := json.Unmarshal(raw, &f); err != nil {
		return false, fmt.Errorf("a filter is not an object")
	}
	switch f.Type {
	case "tag":
		return slices.Contains(a.tags, f.Tag), nil
	case "netmask":
		p, err := netip.ParsePrefix(f.Netmask)
		if err != nil {
			return false, fmt.Errorf("netmask %q", f.Netmask)
		}
		ip, err := netip.ParseAddr(a.addr)
		return err == nil && p.Contains(ip.Unmap()), nil
	case "ip-version":
		ip, err := netip.ParseAddr(a.addr)
		if err != nil {
			return false, fmt.Errorf("ip-version filters need addresses, not host names (%s)", a.addr)
		}
		return (f.Version == 4) == ip.Unmap().Is4(), nil
	case "address-class":
		cl, ok := c.classes[f.Class]
		if !ok {
			return false, fmt.Errorf("class %q", f.Class)
		}
		in, err := c.matches(cl.match, a, depth+1)
		if err != nil || !in || len(cl.exclude) == 0 {
			return in, err
		}
		out, err := c.matches(cl.exclude, a, depth+1)
		return !out, err
	case "and", "or":
		for _, sub := range f.Filters {
			m, err := c.matches(sub, a, depth+1)
			if err != nil {
				return false, err
			}
			if f.Type == "or" && m {
				return true, nil
			}
			if f.Type == "and" && !m {
				return false, nil
			}
		}
		return f.Type == "and", nil
	case "not":
		m, err := c.matches(f.Filter, a, depth+1)
		return !m, err
	default:
		return false, fmt.Errorf("a %q filter is not evaluated (tag, netmask, ip-version, address-class, and, or and not are)", f.Type)
	}
}
