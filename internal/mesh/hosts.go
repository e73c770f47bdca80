package mesh

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/testline"
)

// hosts reads the hosts: each a host name, with where the others reach
// its server when that isn't its name and DefaultPort.
func (p *parser) hosts(m *Mesh, n *yaml.Node) error {
	es, err := p.Mapping(n, "hosts")
	if err != nil {
		return err
	}
	if len(es) > MaxHosts {
		return p.Errorf(n, "hosts", "%d hosts, over the limit of %d", len(es), MaxHosts)
	}
	for _, e := range es {
		key := "hosts." + e.Key
		h := Host{Name: e.Key, Addr: e.Key, Port: DefaultPort}
		if err := testline.CheckHostName(e.Key); err != nil {
			return p.Errorf(e.KeyNode, key, "%v: a host's name is a host name (letters, digits, '-', '_', '.')", err)
		}
		if e.Value.Kind == yaml.ScalarNode && e.Value.Tag == "!!null" {
			m.Hosts[e.Key] = h
			continue
		}
		fs, err := p.Mapping(e.Value, key, "addr", "port")
		if err != nil {
			return err
		}
		for _, f := range fs {
			v, err := p.Scalar(f.Value, key+"."+f.Key)
			if err != nil {
				return err
			}
			switch f.Key {
			case "addr":
				if v == "" {
					return p.Errorf(f.Value, key+".addr", "empty")
				}
				// A host name or an IP address, never a flag: it becomes a
				// test's destination (package testline).
				if d, err := testline.ParseDest(v); err != nil || d.Port != 0 {
					return p.Errorf(f.Value, key+".addr", "%q: want a host name or an IP address (the port goes in port)", v)
				}
				h.Addr = v
			case "port":
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 || n > 65535 {
					return p.Errorf(f.Value, key+".port", "%q: want 1 to 65535", v)
				}
				h.Port = n
			}
		}
		m.Hosts[e.Key] = h
	}
	return nil
}
