//go:build !linux

package lab

import "net/netip"

func (l *Lab) SetRoute(host string, dst netip.Prefix, via string) error { return ErrNeedsLinux }
func (l *Lab) DeleteRoute(host string, dst netip.Prefix) error          { return ErrNeedsLinux }
