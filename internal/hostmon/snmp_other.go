//go:build !linux

package hostmon

import "fmt"

// ReadUDP needs Linux's /proc/net/snmp.
func ReadUDP() (UDPCounters, error) {
	return UDPCounters{}, fmt.Errorf("UDP counters need Linux /proc/net/snmp: %w", ErrUnsupported)
}

// ReadIP needs Linux's /proc/net/snmp.
func ReadIP() (IPCounters, error) {
	return IPCounters{}, fmt.Errorf("IP counters need Linux /proc/net/snmp: %w", ErrUnsupported)
}
