package lab

import (
	"fmt"
	"net/netip"
)

// SetRoute points host's route to dst through its link to via, replacing
// any route to dst it had (ip route replace): the lab's way to change a
// path while a test runs, such as a forwarder sending a destination one
// hop further round.
func (l *Lab) SetRoute(host string, dst netip.Prefix, via string) error {
	h, v := l.hosts[host], l.hosts[via]
	if h == nil || v == nil || !v.addrs[host].IsValid() {
		return fmt.Errorf("lab: no link from %s to %s", host, via)
	}
	return ip("-n", h.NS, "route", "replace", dst.String(), "via", v.addrs[host].String(), "dev", h.ifaces[via])
}

// DeleteRoute removes host's route to dst, as SetRoute or the topology's
// Routes added it.
func (l *Lab) DeleteRoute(host string, dst netip.Prefix) error {
	h := l.hosts[host]
	if h == nil {
		return fmt.Errorf("lab: no host %s", host)
	}
	return ip("-n", h.NS, "route", "del", dst.String())
}
