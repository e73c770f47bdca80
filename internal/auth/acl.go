package auth

import (
	"fmt"
	"net/netip"
	"strings"
)

// ACL admits clients by address: a deny entry always refuses; with allow
// entries, only an address inside one of them is admitted.
type ACL struct {
	Allow []netip.Prefix
	Deny  []netip.Prefix
}

// ParsePrefix reads a CIDR prefix, or a bare address as a prefix of one
// address.
func ParsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is neither an address nor a CIDR prefix", s)
		}
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR prefix", s)
	}
	return p.Masked(), nil
}

// Check admits an address, or says why not.
func (a ACL) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	for _, p := range a.Deny {
		if p.Contains(addr) {
			return fmt.Errorf("server refuses clients from %s (--deny %s)", addr, p)
		}
	}
	if len(a.Allow) == 0 {
		return nil
	}
	for _, p := range a.Allow {
		if p.Contains(addr) {
			return nil
		}
	}
	return fmt.Errorf("server admits no client from %s: it is outside every --allow prefix", addr)
}

// Empty says the list admits everyone.
func (a ACL) Empty() bool { return len(a.Allow) == 0 && len(a.Deny) == 0 }
