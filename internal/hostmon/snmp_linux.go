package hostmon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

const (
	snmpPath  = "/proc/net/snmp"
	snmp6Path = "/proc/net/snmp6"
)

// ReadUDP returns the host's UDP counters, IPv4 and IPv6 summed.
func ReadUDP() (UDPCounters, error) { return readUDP(snmpPath, snmp6Path) }

// ReadIP returns the host's IP counters, IPv4 and IPv6 summed.
func ReadIP() (IPCounters, error) { return readIP(snmpPath, snmp6Path) }

func readUDP(v4, v6 string) (UDPCounters, error) {
	data, err := os.ReadFile(v4)
	if err != nil {
		return UDPCounters{}, err
	}
	u, err := ParseSNMP(data)
	if err != nil {
		return UDPCounters{}, fmt.Errorf("%s: %w", v4, err)
	}
	m, err := readSNMP6(v6, "Udp6")
	if err != nil {
		return UDPCounters{}, err
	}
	add(u.counters(), m)
	return u, nil
}

func readIP(v4, v6 string) (IPCounters, error) {
	data, err := os.ReadFile(v4)
	if err != nil {
		return IPCounters{}, err
	}
	c, err := ParseSNMPIP(data)
	if err != nil {
		return IPCounters{}, fmt.Errorf("%s: %w", v4, err)
	}
	m, err := readSNMP6(v6, "Ip6")
	if err != nil {
		return IPCounters{}, err
	}
	add(c.counters(), renameIP6(m))
	return c, nil
}

// readSNMP6 reads one prefix of snmp6. The file is absent when IPv6 is
// disabled, which means no IPv6 traffic: an empty result, not an error.
func readSNMP6(path, prefix string) (map[string]uint64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := parseSNMP6(data, prefix)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
