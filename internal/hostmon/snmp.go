package hostmon

import (
	"fmt"
	"strconv"
	"strings"
)

// UDPCounters are the Udp SNMP counters (RFC 4113 plus Linux's own), from
// /proc/net/snmp with Udp6 from /proc/net/snmp6 added where present.
type UDPCounters struct {
	InDatagrams, NoPorts, InErrors, OutDatagrams, RcvbufErrors, SndbufErrors, InCsumErrors, IgnoredMulti, MemErrors uint64
}

// IPCounters are the Ip SNMP counters (RFC 4293 names), from the Ip: lines
// of /proc/net/snmp with the matching Ip6 counters added where present.
// Forwarding and DefaultTTL are settings, not counters, and are left out.
type IPCounters struct {
	InReceives, InHdrErrors, InAddrErrors, ForwDatagrams, InUnknownProtos, InDiscards, InDelivers,
	OutRequests, OutDiscards, OutNoRoutes, ReasmTimeout, ReasmReqds, ReasmOKs, ReasmFails,
	FragOKs, FragFails, FragCreates, OutTransmits uint64
}

// counter names one field of a counter struct, as the kernel spells it.
type counter struct {
	name string
	p    *uint64
}

func (c *UDPCounters) counters() []counter {
	return []counter{
		{"InDatagrams", &c.InDatagrams}, {"NoPorts", &c.NoPorts}, {"InErrors", &c.InErrors},
		{"OutDatagrams", &c.OutDatagrams}, {"RcvbufErrors", &c.RcvbufErrors},
		{"SndbufErrors", &c.SndbufErrors}, {"InCsumErrors", &c.InCsumErrors},
		{"IgnoredMulti", &c.IgnoredMulti}, {"MemErrors", &c.MemErrors},
	}
}

func (c *IPCounters) counters() []counter {
	return []counter{
		{"InReceives", &c.InReceives}, {"InHdrErrors", &c.InHdrErrors}, {"InAddrErrors", &c.InAddrErrors},
		{"ForwDatagrams", &c.ForwDatagrams}, {"InUnknownProtos", &c.InUnknownProtos},
		{"InDiscards", &c.InDiscards}, {"InDelivers", &c.InDelivers}, {"OutRequests", &c.OutRequests},
		{"OutDiscards", &c.OutDiscards}, {"OutNoRoutes", &c.OutNoRoutes}, {"ReasmTimeout", &c.ReasmTimeout},
		{"ReasmReqds", &c.ReasmReqds}, {"ReasmOKs", &c.ReasmOKs}, {"ReasmFails", &c.ReasmFails},
		{"FragOKs", &c.FragOKs}, {"FragFails", &c.FragFails}, {"FragCreates", &c.FragCreates},
		{"OutTransmits", &c.OutTransmits},
	}
}

// Sub returns a - b per field, for deltas. A counter that went backwards
// (a reset, or arguments swapped) gives 0, never a huge wrapped value.
func (a UDPCounters) Sub(b UDPCounters) UDPCounters {
	subCounters(a.counters(), b.counters())
	return a
}

// Sub returns a - b per field, saturating at 0 like UDPCounters.Sub.
func (a IPCounters) Sub(b IPCounters) IPCounters {
	subCounters(a.counters(), b.counters())
	return a
}

func subCounters(a, b []counter) {
	for i := range a {
		if *a[i].p < *b[i].p {
			*a[i].p = 0
		} else {
			*a[i].p -= *b[i].p
		}
	}
}

// add adds src's values to the fields of dst that it names.
func add(dst []counter, src map[string]uint64) {
	for _, c := range dst {
		*c.p += src[c.name]
	}
}

// ParseSNMP parses the Udp section of /proc/net/snmp. Counters an older
// kernel lacks stay zero and ones a newer kernel adds are ignored.
func ParseSNMP(data []byte) (UDPCounters, error) {
	m, err := parseSNMPSection(data, "Udp")
	if err != nil {
		return UDPCounters{}, err
	}
	var u UDPCounters
	add(u.counters(), m)
	return u, nil
}

// ParseSNMPIP parses the Ip section of /proc/net/snmp, like ParseSNMP.
func ParseSNMPIP(data []byte) (IPCounters, error) {
	m, err := parseSNMPSection(data, "Ip")
	if err != nil {
		return IPCounters{}, err
	}
	var c IPCounters
	add(c.counters(), m)
	return c, nil
}

// parseSNMPSection returns one section of /proc/net/snmp, which prints each
// protocol as two lines with the same prefix: names, then values.
func parseSNMPSection(data []byte, section string) (map[string]uint64, error) {
	prefix := section + ":"
	var lines [][]string
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == prefix {
			lines = append(lines, f[1:])
		}
	}
	switch {
	case len(lines) == 0:
		return nil, fmt.Errorf("snmp: no %s lines", prefix)
	case !isName(lines[0]):
		return nil, fmt.Errorf("snmp: %s header line missing", prefix)
	case len(lines) == 1:
		return nil, fmt.Errorf("snmp: %s value line missing", prefix)
	case len(lines) > 2:
		return nil, fmt.Errorf("snmp: %d %s lines, want a header and a value line", len(lines), prefix)
	}
	names, values := lines[0], lines[1]
	if len(names) != len(values) {
		return nil, fmt.Errorf("snmp: %s has %d names but %d values", prefix, len(names), len(values))
	}
	m := make(map[string]uint64, len(names))
	for i, name := range names {
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("snmp: %s names %s twice", prefix, name)
		}
		v, err := strconv.ParseUint(values[i], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("snmp: %s %s: %w", prefix, name, err)
		}
		m[name] = v
	}
	return m, nil
}

// isName reports whether fields look like a header line: names start with a
// letter, values never do.
func isName(fields []string) bool {
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		c := f[0]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
