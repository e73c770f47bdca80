package tcpinfo

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// The MPTCP socket options (include/uapi/linux/mptcp.h); x/sys names the
// level only.
const (
	optMPTCPInfo         = 1 // MPTCP_INFO
	optMPTCPTCPInfo      = 2 // MPTCP_TCPINFO
	optMPTCPSubflowAddrs = 3 // MPTCP_SUBFLOW_ADDRS
	ipprotoMPTCP         = unix.IPPROTO_MPTCP
	solMPTCP             = unix.SOL_MPTCP
)

// GetMPTCP reads what the kernel reports of the MPTCP connection on c:
// ErrNotMPTCP for a plain TCP socket, Fallback for an MPTCP socket whose
// handshake fell back to TCP, else the connection's figures and, where
// the kernel gives them (5.16 on), each subflow's TCP_INFO and addresses.
func GetMPTCP(c syscall.RawConn) (*MPTCP, error) {
	var m *MPTCP
	var err error
	if cerr := c.Control(func(fd uintptr) { m, err = readMPTCP(int(fd)) }); cerr != nil {
		return nil, cerr
	}
	return m, err
}

func readMPTCP(fd int) (*MPTCP, error) {
	proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return nil, fmt.Errorf("getsockopt SO_PROTOCOL: %w", err)
	}
	if proto != ipprotoMPTCP {
		return nil, ErrNotMPTCP
	}
	var buf [mptcpInfoLen]byte
	n, err := getsockopt(fd, solMPTCP, optMPTCPInfo, buf[:])
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOPROTOOPT):
		// The kernel refuses MPTCP_INFO on a connection that fell back
		// (EOPNOTSUPP on IPv4, ENOPROTOOPT on IPv6), as Go's own
		// TCPConn.MultipathTCP reads it.
		return &MPTCP{Fallback: true}, nil
	case err != nil:
		return nil, fmt.Errorf("getsockopt MPTCP_INFO: %w", err)
	}
	m := new(MPTCP)
	decodeMPTCPInfo(buf[:n], m)
	if m.Fallback {
		return &MPTCP{Fallback: true}, nil
	}
	raw := subflowRequest(infoLen)
	if n, err := getsockopt(fd, solMPTCP, optMPTCPTCPInfo, raw); err == nil {
		if count, infos, err := decodeSubflowInfos(raw[:n]); err == nil {
			m.SubflowCount = max(count, len(infos))
			m.Subflows = make([]Subflow, len(infos))
			for i := range infos {
				m.Subflows[i].Info = infos[i]
			}
		}
	}
	raw = subflowRequest(subflowAddrsLen)
	if n, err := getsockopt(fd, solMPTCP, optMPTCPSubflowAddrs, raw); err == nil {
		// The two answers list the subflows in one order, the kernel's;
		// a subflow that came or went between them leaves the lists of
		// different lengths, and then no address is paired with a
		// subflow it may not belong to.
		if addrs, err := decodeSubflowAddrs(raw[:n]); err == nil && len(addrs) == len(m.Subflows) {
			for i, a := range addrs {
				m.Subflows[i].Local, m.Subflows[i].Remote = a[0], a[1]
			}
		}
	}
	return m, nil
}
