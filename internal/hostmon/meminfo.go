package hostmon

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMemUsed reads /proc/meminfo's MemTotal and MemAvailable and
// returns the bytes in use: what the kernel could not hand to a new
// program without swapping (page cache that can be dropped is free).
func ParseMemUsed(data []byte) (int64, error) {
	var total, avail int64 = -1, -1
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "MemTotal:" && f[0] != "MemAvailable:") {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || kb < 0 || kb > 1<<50 || len(f) > 2 && f[2] != "kB" {
			return 0, fmt.Errorf("meminfo: bad line %q", strings.TrimSpace(line))
		}
		if f[0] == "MemTotal:" {
			total = kb * 1024
		} else {
			avail = kb * 1024
		}
	}
	if total < 0 || avail < 0 || avail > total {
		return 0, fmt.Errorf("meminfo: no MemTotal and MemAvailable")
	}
	return total - avail, nil
}
