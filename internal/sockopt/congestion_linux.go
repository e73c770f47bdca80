package sockopt

import (
	"fmt"
	"os"
	"strings"
)

// allowedPath lists the algorithms an unprivileged socket may choose.
const allowedPath = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

// congestionErr explains a refused TCP_CONGESTION: the kernel only says
// ENOENT or EPERM, so the error adds the list the user can pick from.
func congestionErr(name string, err error) error {
	base := setErr("TCP_CONGESTION", name, err)
	data, rerr := os.ReadFile(allowedPath)
	if rerr != nil {
		return base
	}
	allowed := parseCongestionList(data)
	if len(allowed) == 0 {
		return base
	}
	return fmt.Errorf("%w (kernel allows: %s)", base, strings.Join(allowed, " "))
}

// parseCongestionList splits the space-separated list the kernel prints.
// It caps the count so a corrupt file cannot make the message unbounded.
func parseCongestionList(data []byte) []string {
	const maxNames = 64
	f := strings.Fields(string(data))
	if len(f) > maxNames {
		f = f[:maxNames]
	}
	return f
}
