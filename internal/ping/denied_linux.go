package ping

import (
	"fmt"
	"os"
	"strings"
)

// SocketDenied is the error of a user whose group may not open ping
// sockets: what the range is, what to set, and the privileged way.
func SocketDenied() error {
	cur := "unreadable"
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range"); err == nil {
		cur = `"` + strings.Join(strings.Fields(string(b)), " ") + `"`
	}
	return fmt.Errorf("ICMP ping sockets are not permitted for group %d: net.ipv4.ping_group_range is %s in this network namespace; set it to include the group (sysctl net.ipv4.ping_group_range=\"0 2147483647\"), or run as root or with CAP_NET_RAW and --raw",
		os.Getegid(), cur)
}
