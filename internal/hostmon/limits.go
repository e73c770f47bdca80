package hostmon

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits are the kernel's socket buffer limits and TCP defaults.
type Limits struct {
	RmemMax, WmemMax    int64    // /proc/sys/net/core/rmem_max, wmem_max
	TCPRmem, TCPWmem    [3]int64 // /proc/sys/net/ipv4/tcp_rmem, tcp_wmem (min default max)
	Congestion          string   // net.ipv4.tcp_congestion_control
	AvailableCongestion []string // tcp_allowed_congestion_control
	DefaultQdisc        string   // net.core.default_qdisc
}

// maxSysctlWords bounds a word list so a corrupt file cannot grow a report
// without limit; the kernel has a few dozen congestion modules at most.
const maxSysctlWords = 64

// parseSysctlInt parses a file holding one integer.
func parseSysctlInt(data []byte) (int64, error) {
	f := strings.Fields(string(data))
	if len(f) != 1 {
		return 0, fmt.Errorf("want one integer, got %d fields", len(f))
	}
	v, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, err // ParseInt returns the clamped value on overflow; we want none
	}
	return v, nil
}

// parseSysctlTriple parses "min default max", as in tcp_rmem.
func parseSysctlTriple(data []byte) ([3]int64, error) {
	var out [3]int64
	f := strings.Fields(string(data))
	if len(f) != len(out) {
		return out, fmt.Errorf("want 3 integers, got %d fields", len(f))
	}
	for i := range out {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return [3]int64{}, err
		}
		out[i] = v
	}
	return out, nil
}

// parseSysctlWord parses a file holding one name, as in default_qdisc.
func parseSysctlWord(data []byte) (string, error) {
	f := strings.Fields(string(data))
	if len(f) != 1 {
		return "", fmt.Errorf("want one word, got %d fields", len(f))
	}
	return f[0], nil
}

// parseSysctlWords parses a space-separated list of names.
func parseSysctlWords(data []byte) ([]string, error) {
	f := strings.Fields(string(data))
	if len(f) > maxSysctlWords {
		return nil, fmt.Errorf("%d words, more than the %d expected", len(f), maxSysctlWords)
	}
	return f, nil
}
