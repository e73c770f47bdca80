package sockopt

import (
	"fmt"
	"syscall"
)

// Apply sets every non-zero option on c. macOS has no per-socket
// TCP_CONGESTION, so asking for one fails before anything is set.
func Apply(c syscall.RawConn, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.Congestion != "" {
		return unsupported("TCP_CONGESTION", o.Congestion)
	}
	if o.MaxPacingRate != 0 {
		return unsupported("SO_MAX_PACING_RATE", o.MaxPacingRate)
	}
	if o.BindDevice != "" {
		return unsupported("SO_BINDTODEVICE", o.BindDevice)
	}
	if o.DontFragment {
		return unsupported("IP_MTU_DISCOVER", "IP_PMTUDISC_DO")
	}
	if o.UserTimeout != 0 {
		return unsupported("TCP_USER_TIMEOUT", o.UserTimeout.Milliseconds())
	}
	return control(c, func(fd uintptr) error { return applyFD(int(fd), o) })
}

func applyFD(fd int, o Options) error {
	set := []struct {
		name       string
		on         bool
		level, opt int
		value      int
	}{
		{"SO_SNDBUF", o.SndBuf != 0, syscall.SOL_SOCKET, syscall.SO_SNDBUF, o.SndBuf},
		{"SO_RCVBUF", o.RcvBuf != 0, syscall.SOL_SOCKET, syscall.SO_RCVBUF, o.RcvBuf},
		{"TCP_MAXSEG", o.MSS != 0, syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, o.MSS},
		{"TCP_NODELAY", o.NoDelay, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
	}
	for _, s := range set {
		if !s.on {
			continue
		}
		if err := syscall.SetsockoptInt(fd, s.level, s.opt, s.value); err != nil {
			return setErr(s.name, s.value, err)
		}
	}
	if o.TOS != 0 {
		name, level, opt := "IP_TOS", syscall.IPPROTO_IP, syscall.IP_TOS
		if sa, err := syscall.Getsockname(fd); err == nil {
			if _, v6 := sa.(*syscall.SockaddrInet6); v6 {
				name, level, opt = "IPV6_TCLASS", syscall.IPPROTO_IPV6, syscall.IPV6_TCLASS
			}
		}
		if err := syscall.SetsockoptInt(fd, level, opt, o.TOS); err != nil {
			return setErr(name, o.TOS, err)
		}
	}
	return nil
}

// Read returns the granted values of a connected TCP socket. macOS gives
// no per-socket MTU or congestion algorithm, so those stay zero.
func Read(c syscall.RawConn) (Info, error) {
	var info Info
	err := control(c, func(fd uintptr) error {
		var err error
		if info.SndBuf, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF); err != nil {
			return fmt.Errorf("reading SO_SNDBUF: %w", err)
		}
		if info.RcvBuf, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF); err != nil {
			return fmt.Errorf("reading SO_RCVBUF: %w", err)
		}
		if info.MSS, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG); err != nil {
			return fmt.Errorf("reading TCP_MAXSEG: %w", err)
		}
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	return info, nil
}
