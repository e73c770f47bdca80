package sockopt

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The IPv6 flow label manager (linux/in6.h); x/sys/unix lacks them.
const (
	ipv6FlowLabelMgr = 32 // IPV6_FLOWLABEL_MGR
	ipv6FlowInfoSend = 33 // IPV6_FLOWINFO_SEND
	ipv6FlAGet       = 0  // IPV6_FL_A_GET
	ipv6FlFCreate    = 1  // IPV6_FL_F_CREATE
	ipv6FlSAny       = 255
)

// in6FlowLabelReq is struct in6_flowlabel_req.
type in6FlowLabelReq struct {
	Dst     [16]byte
	Label   [4]byte // network order
	Action  uint8
	Share   uint8
	Flags   uint16
	Expires uint16
	Linger  uint16
	_       uint32
}

// sockaddrInet6 is struct sockaddr_in6 with its flow information, which
// x/sys/unix's SockaddrInet6 leaves out.
type sockaddrInet6 struct {
	Family   uint16
	Port     [2]byte // network order
	FlowInfo [4]byte // network order
	Addr     [16]byte
	ScopeID  uint32
}

// FlowLabelControl returns a net.Dialer.Control that connects a TCP or
// UDP socket to address with IPv6 flow label label, as iperf3's -L does
// on Linux: it leases the label for the destination
// (IPV6_FLOWLABEL_MGR), turns on IPV6_FLOWINFO_SEND and connects with
// the label in sin6_flowinfo. Go's own connect that follows finds the
// socket connecting or connected, which it takes as success. then runs
// first (the other options), when not nil.
func FlowLabelControl(label int, then func(string, string, syscall.RawConn) error) func(string, string, syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if then != nil {
			if err := then(network, address, c); err != nil {
				return err
			}
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ap.Addr().Is6() || ap.Addr().Is4In6() {
			return fmt.Errorf("-L %d: a flow label needs an IPv6 destination, not %s", label, address)
		}
		return control(c, func(fd uintptr) error { return connectWithFlowLabel(int(fd), ap, label) })
	}
}

func connectWithFlowLabel(fd int, ap netip.AddrPort, label int) error {
	req := in6FlowLabelReq{Dst: ap.Addr().As16(), Action: ipv6FlAGet, Share: ipv6FlSAny, Flags: ipv6FlFCreate}
	binary.BigEndian.PutUint32(req.Label[:], uint32(label)&0xfffff)
	if _, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.IPPROTO_IPV6, ipv6FlowLabelMgr,
		uintptr(unsafe.Pointer(&req)), unsafe.Sizeof(req), 0); e != 0 {
		return setErr("IPV6_FLOWLABEL_MGR", label, e)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, ipv6FlowInfoSend, 1); err != nil {
		return setErr("IPV6_FLOWINFO_SEND", 1, err)
	}
	sa := sockaddrInet6{Family: unix.AF_INET6, Addr: ap.Addr().As16()}
	binary.BigEndian.PutUint16(sa.Port[:], ap.Port())
	copy(sa.FlowInfo[:], req.Label[:])
	if z := ap.Addr().Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			sa.ScopeID = uint32(ifi.Index)
		} else if n, err := strconv.Atoi(z); err == nil {
			sa.ScopeID = uint32(n)
		}
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	switch e {
	case 0, unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
		return nil
	}
	return fmt.Errorf("connecting with flow label %d: %w", label, e)
}
