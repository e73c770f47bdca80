package hostmon

import (
	"fmt"
	"strconv"
	"strings"
)

// parseSNMP6 returns the counters of /proc/net/snmp6 whose names start
// with prefix ("Udp6", "Ip6"), keyed by the rest of the name, so
// "Udp6InDatagrams" is "InDatagrams". The file is one "Name value" pair a line.
// Lines for other prefixes are skipped unparsed.
func parseSNMP6(data []byte, prefix string) (map[string]uint64, error) {
	m := make(map[string]uint64)
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name, ok := strings.CutPrefix(f[0], prefix)
		if !ok || name == "" {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("snmp6: %s: want a name and a value, got %d fields", f[0], len(f))
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("snmp6: %s appears twice", f[0])
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("snmp6: %s: %w", f[0], err)
		}
		m[name] = v
	}
	return m, nil
}

// ip6Names maps the Ip6 names that differ from their IPv4 counterparts.
var ip6Names = map[string]string{"OutForwDatagrams": "ForwDatagrams"}

// renameIP6 rewrites Ip6 keys to the IPCounters names.
func renameIP6(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		if n, ok := ip6Names[k]; ok {
			k = n
		}
		out[k] = v
	}
	return out
}
