package sockopt

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Apply sets every non-zero option on c. The error names the option and the requested value,
// e.g. `setting TCP_CONGESTION "foo": no such file or directory`, and for a congestion algorithm
// the kernel refuses it lists what the kernel allows.
// Apply works for both IPv4 and IPv6 sockets.
func Apply(c syscall.RawConn, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	return control(c, func(fd uintptr) error { return applyFD(int(fd), o) })
}

func applyFD(fd int, o Options) error {
	// Buffers first: the receive buffer decides the window scale offered in
	// the SYN, so it must be in place before connect or listen.
	if o.SndBuf != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, o.SndBuf); err != nil {
			return setErr("SO_SNDBUF", o.SndBuf, err)
		}
	}
	if o.RcvBuf != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.RcvBuf); err != nil {
			return setErr("SO_RCVBUF", o.RcvBuf, err)
		}
	}
	if o.MSS != 0 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG, o.MSS); err != nil {
			return setErr("TCP_MAXSEG", o.MSS, err)
		}
	}
	if o.NoDelay {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return setErr("TCP_NODELAY", true, err)
		}
	}
	if o.Congestion != "" {
		if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, o.Congestion); err != nil {
			return congestionErr(o.Congestion, err)
		}
	}
	if o.TOS != 0 {
		if err := setTOS(fd, o.TOS); err != nil {
			return err
		}
	}
	if o.MaxPacingRate != 0 {
		if err := unix.SetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, o.MaxPacingRate); err != nil {
			return setErr("SO_MAX_PACING_RATE", o.MaxPacingRate, err)
		}
	}
	if o.BindDevice != "" {
		if err := unix.BindToDevice(fd, o.BindDevice); err != nil {
			return setErr("SO_BINDTODEVICE", o.BindDevice, err)
		}
	}
	if o.DontFragment {
		if err := setDontFragment(fd); err != nil {
			return err
		}
	}
	if o.UserTimeout != 0 {
		ms := int(o.UserTimeout.Milliseconds())
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, ms); err != nil {
			return setErr("TCP_USER_TIMEOUT", ms, err)
		}
	}
	return nil
}

// setDontFragment makes the kernel refuse to fragment the socket's
// datagrams, as iperf3's --dont-fragment: IPv4 sends with DF set. An
// AF_INET6 socket may carry IPv4 through v4-mapped addresses, so it
// gets both families' options.
func setDontFragment(fd int) error {
	family, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return setErr("IP_MTU_DISCOVER", "IP_PMTUDISC_DO", err)
	}
	if family == unix.AF_INET6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO); err != nil {
			return setErr("IPV6_MTU_DISCOVER", "IPV6_PMTUDISC_DO", err)
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG, 1); err != nil {
			return setErr("IPV6_DONTFRAG", 1, err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO); err != nil && family == unix.AF_INET {
		return setErr("IP_MTU_DISCOVER", "IP_PMTUDISC_DO", err)
	}
	return nil
}

// setTOS sets the traffic class for the socket's family. An AF_INET6
// socket may carry IPv4 through v4-mapped addresses (a dual-stack
// listener's accepted conns), and those packets take IP_TOS, so it gets both.
func setTOS(fd, tos int) error {
	family, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return setErr("IP_TOS", tos, err)
	}
	if family == unix.AF_INET6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, tos); err != nil {
			return setErr("IPV6_TCLASS", tos, err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS, tos); err != nil {
		return setErr("IP_TOS", tos, err)
	}
	return nil
}
