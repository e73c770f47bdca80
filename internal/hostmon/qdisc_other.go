//go:build !linux

package hostmon

import (
	"fmt"
	"net/netip"
)

// ReadRootQdisc needs Linux's rtnetlink.
func ReadRootQdisc(addr netip.Addr) (RootQdisc, error) {
	return RootQdisc{}, fmt.Errorf("the qdisc of %v needs Linux rtnetlink: %w", addr, ErrUnsupported)
}
