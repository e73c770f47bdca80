package emit

import (
	"net"
	"strconv"
	"strings"
)

// splitAddr splits "host:port" (or "[v6]:port", or "host port N" as a
// Header's ServerAddr may be written) for iperf's "host H, port P"
// wording. The port is "" when addr has none.
func splitAddr(addr string) (host, port string) {
	if h, p, err := net.SplitHostPort(addr); err == nil {
		return h, p
	}
	if h, p, ok := strings.Cut(addr, " port "); ok {
		return h, p
	}
	return addr, ""
}

// splitAddrNum is splitAddr with a numeric port, 0 when there is none.
func splitAddrNum(addr string) (string, int) {
	host, port := splitAddr(addr)
	n, _ := strconv.Atoi(port)
	return host, n
}

// describeAddr renders an address the way iperf does: "127.0.0.1 port 5201".
func describeAddr(addr string) string {
	host, port := splitAddr(addr)
	if port == "" {
		return host
	}
	return host + " port " + port
}
