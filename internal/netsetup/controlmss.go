package netsetup

import (
	"net"

	"github.com/wireperf/wireperf/internal/sockopt"
)

// ControlMSS is a control connection's TCP MSS, as iperf3 -V shows it;
// 0 when the connection or the OS cannot tell.
func ControlMSS(c *net.TCPConn) int {
	if c == nil {
		return 0
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	info, err := sockopt.Read(raw)
	if err != nil {
		return 0
	}
	return info.MSS
}
