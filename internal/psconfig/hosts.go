package psconfig

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// namePattern is pSConfig's own pattern for the names of its entries.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9:._\-]{1,200}$`)

// address is one entry of the template's addresses.
type address struct {
	name     string
	addr     string
	host     string // the "host" it belongs to, for excludes-self
	labels   map[string]string
	tags     []string
	disabled bool
}

// hostName is a pSConfig name as a mesh host's name: a host name's
// characters (letters, digits, '-', '_', '.'), its labels not empty and
// not starting or ending with '-'. A colon (an IPv6 literal's) becomes
// '-'.
func hostName(s string) string {
	var parts []string
	for _, label := range strings.Split(s, ".") {
		label = strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
				return r
			}
			return '-'
		}, label)
		label = strings.Trim(label, "-")
		if len(label) > 63 {
			label = strings.Trim(label[:63], "-")
		}
		if label != "" {
			parts = append(parts, label)
		}
	}
	if len(parts) == 0 {
		return "host"
	}
	return strings.Join(parts, ".")
}

// checkAddr accepts a host name or an IP address, never anything a test
// line could read as a flag or a second word.
func checkAddr(s string) error {
	if _, err := netip.ParseAddr(s); err == nil {
		return nil
	}
	if s == "" || len(s) > 253 || hostName(s) != strings.TrimSuffix(s, ".") || strings.HasPrefix(s, "-") {
		return fmt.Errorf("%s is not a host name or an IP address", strconv.Quote(s))
	}
	return nil
}

// readAddresses reads the template's addresses, each checked; one that
// can't be used is left out with a warning, and so are groups' references
// to it.
func (c *converter) readAddresses(raw map[string]json.RawMessage) {
	c.addrs = map[string]*address{}
	for _, name := range sortedKeys(raw) {
		where := "addresses." + name
		if !namePattern.MatchString(name) {
			c.w.linef("addresses: %s is not a pSConfig name; left out", strconv.Quote(name))
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw[name], &fields); err != nil {
			c.w.linef("%s: want an object; left out", where)
			continue
		}
		a := &address{name: name, labels: map[string]string{}}
		for _, k := range sortedKeys(fields) {
			v := fields[k]
			switch k {
			case "address":
				_ = json.Unmarshal(v, &a.addr)
			case "host":
				_ = json.Unmarshal(v, &a.host)
			case "disabled":
				_ = json.Unmarshal(v, &a.disabled)
			case "labels":
				var labels map[string]json.RawMessage
				if json.Unmarshal(v, &labels) != nil {
					c.w.linef("%s.labels: want an object; labels left out", where)
					continue
				}
				for _, l := range sortedKeys(labels) {
					var la struct {
						Address string `json:"address"`
					}
					if json.Unmarshal(labels[l], &la) != nil || checkAddr(la.Address) != nil || !namePattern.MatchString(l) {
						c.w.linef("%s.labels.%s: no usable address; left out", where, l)
						continue
					}
					a.labels[l] = la.Address
				}
			case "no-agent":
				c.w.dropped("addresses.*.no-agent", name, "every mesh host that sources a test runs a wireperf daemon")
			case "remote-addresses":
				c.w.dropped("addresses.*.remote-addresses", name, "a mesh host has one address for every peer; the default address is used")
			case "lead-bind-address", "pscheduler-address":
				c.w.dropped("addresses.*."+k, name, "a daemon binds and is reached at its host's address")
			case "tags":
				_ = json.Unmarshal(v, &a.tags)
				if len(c.classes) == 0 {
					c.w.dropped("addresses.*.tags", name, "no mesh equivalent (the template has no address classes to select by them)")
				}
			case "contexts", "_meta":
				c.w.dropped("addresses.*."+k, name, "no mesh equivalent")
			default:
				c.w.dropped("addresses.*."+k, name, "not a pSConfig key")
			}
		}
		if err := checkAddr(a.addr); err != nil {
			c.w.linef("%s: %v; left out", where, err)
			continue
		}
		if a.disabled {
			c.w.dropped("addresses.*.disabled", name, "a disabled address is left out of every group")
		}
		c.addrs[name] = a
	}
}

// meshHost is the mesh host for an address (with a label, or "" for its
// own address), made on first use. A labelled address (a second address
// family, say) is a host of its own in a mesh file, whose hosts each have
// one address.
func (c *converter) meshHost(a *address, label string) (string, bool) {
	addr := a.addr
	ref := a.name
	if label != "" {
		la, ok := a.labels[label]
		if !ok {
			return "", false
		}
		addr, ref = la, a.name+"/"+label
	}
	if h, ok := c.hostByRef[ref]; ok {
		return h, true
	}
	base := hostName(a.name)
	if label != "" {
		base = hostName(a.name + "-" + label)
	}
	h := base
	for i := 2; c.usedHosts[h]; i++ {
		h = base + "-" + strconv.Itoa(i)
	}
	switch {
	case label != "":
		c.notes[h] = hostNote{"labels", ref + " → " + h, "a labelled address is a mesh host of its own: its daemon's config names that host, and reservations don't know it shares a machine with the address's own host"}
	case h != ref:
		c.notes[h] = hostNote{"renamed addresses", a.name + " → " + h, "a mesh host's name is a host name (letters, digits, '-', '_', '.')"}
	}
	c.usedHosts[h] = true
	c.hostByRef[ref] = h
	c.file.Hosts[h] = Host{Addr: addr}
	c.origin[h] = originOf(a)
	return h, true
}

// literalHost is a destination a test names outright (not one of the
// group's addresses): a host of the mesh that only receives.
func (c *converter) literalHost(addr string) (string, error) {
	if err := checkAddr(addr); err != nil {
		return "", err
	}
	ref := "literal:" + addr
	if h, ok := c.hostByRef[ref]; ok {
		return h, nil
	}
	for _, a := range c.addrs { // an address of the template, by its value
		if a.addr == addr && !a.disabled {
			h, _ := c.meshHost(a, "")
			return h, nil
		}
	}
	base := hostName(addr)
	h := base
	for i := 2; c.usedHosts[h]; i++ {
		h = base + "-" + strconv.Itoa(i)
	}
	c.usedHosts[h] = true
	c.hostByRef[ref] = h
	c.file.Hosts[h] = Host{Addr: addr}
	c.origin[h] = "literal:" + addr
	return h, nil
}

// hostNote is a warning about a host, given only if the host is kept.
type hostNote struct{ key, where, why string }

// originOf names the machine an address is on, for excludes-self.
func originOf(a *address) string {
	if a.host != "" {
		return "host:" + a.host
	}
	return "address:" + a.name
}
