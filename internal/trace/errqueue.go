package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// queuedError is what Linux puts on a socket's error queue (IP_RECVERR,
// IPV6_RECVERR) for an ICMP error about a datagram the socket sent: a
// struct sock_extended_err and, after it, the address of the host that
// sent the ICMP error (SO_EE_OFFENDER).
type queuedError struct {
	Origin   uint8 // SO_EE_ORIGIN_*: where the error came from
	Type     uint8 // the ICMP type
	Code     uint8 // and code
	Offender netip.Addr
}

// The origins an ICMP error has (linux/errqueue.h).
const (
	eeOriginICMP  = 2
	eeOriginICMP6 = 3
)

// extendedErrLen is struct sock_extended_err's length: errno (4),
// origin, type, code, pad (1 each), info (4), data (4).
const extendedErrLen = 16

// errNotICMPError is a queued error that is not an ICMP error (a local
// one, such as a datagram too large for the path).
var errNotICMPError = errors.New("not an ICMP error")

// parseQueuedError reads the data of an IP_RECVERR (IPV6_RECVERR)
// control message. Its bytes come from the kernel but quote the
// network's: every length is checked before it is used.
func parseQueuedError(b []byte) (queuedError, error) {
	if len(b) < extendedErrLen {
		return queuedError{}, fmt.Errorf("a queued error of %d bytes, less than %d", len(b), extendedErrLen)
	}
	q := queuedError{Origin: b[4], Type: b[5], Code: b[6]}
	if q.Origin != eeOriginICMP && q.Origin != eeOriginICMP6 {
		return q, fmt.Errorf("%w: origin %d", errNotICMPError, q.Origin)
	}
	off := b[extendedErrLen:]
	if len(off) < 2 {
		return q, errors.New("a queued ICMP error without its sender's address")
	}
	// A sockaddr's family is in the host's byte order; its address
	// follows the port, in network order.
	switch fam := binary.NativeEndian.Uint16(off); {
	case fam == afInet && len(off) >= 8:
		q.Offender = netip.AddrFrom4([4]byte(off[4:8]))
	case fam == afInet6 && len(off) >= 24:
		q.Offender = netip.AddrFrom16([16]byte(off[8:24])).Unmap()
	default:
		return q, fmt.Errorf("a queued ICMP error's sender: family %d in %d bytes", fam, len(off))
	}
	return q, nil
}

// Linux's address families, as a sockaddr holds them.
const (
	afInet  = 2
	afInet6 = 10
)

// kind is what the ICMP error says of a probe: a router's time exceeded
// or an unreachable, over IPv4 (ICMP types 11 and 3) or IPv6 (ICMPv6
// types 3 and 1).
func (q queuedError) kind() (ReplyKind, bool) {
	switch {
	case q.Origin == eeOriginICMP && q.Type == 11, q.Origin == eeOriginICMP6 && q.Type == 3:
		return TimeExceeded, true
	case q.Origin == eeOriginICMP && q.Type == 3, q.Origin == eeOriginICMP6 && q.Type == 1:
		return Unreachable, true
	}
	return 0, false
}
