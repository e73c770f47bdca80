package sockopt

import (
	"fmt"
	"syscall"
)

// Apply sets every non-zero option on c. Windows can only set the buffers
// and TCP_NODELAY per socket (it ignores IP_TOS and has no settable
// TCP_MAXSEG or TCP_CONGESTION), so asking for the others fails before
// anything is set.
func Apply(c syscall.RawConn, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	switch {
	case o.MSS != 0:
		return unsupported("TCP_MAXSEG", o.MSS)
	case o.Congestion != "":
		return unsupported("TCP_CONGESTION", o.Congestion)
	case o.TOS != 0:
		return unsupported("IP_TOS", o.TOS)
	case o.MaxPacingRate != 0:
		return unsupported("SO_MAX_PACING_RATE", o.MaxPacingRate)
	case o.BindDevice != "":
		return unsupported("SO_BINDTODEVICE", o.BindDevice)
	case o.DontFragment:
		return unsupported("IP_MTU_DISCOVER", "IP_PMTUDISC_DO")
	case o.UserTimeout != 0:
		return unsupported("TCP_USER_TIMEOUT", o.UserTimeout.Milliseconds())
	}
	return control(c, func(fd uintptr) error {
		h := syscall.Handle(fd)
		if o.SndBuf != 0 {
			if err := syscall.SetsockoptInt(h, syscall.SOL_SOCKET, syscall.SO_SNDBUF, o.SndBuf); err != nil {
				return setErr("SO_SNDBUF", o.SndBuf, err)
			}
		}
		if o.RcvBuf != 0 {
			if err := syscall.SetsockoptInt(h, syscall.SOL_SOCKET, syscall.SO_RCVBUF, o.RcvBuf); err != nil {
				return setErr("SO_RCVBUF", o.RcvBuf, err)
			}
		}
		if o.NoDelay {
			if err := syscall.SetsockoptInt(h, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
				return setErr("TCP_NODELAY", true, err)
			}
		}
		return nil
	})
}

// Read returns the granted buffer sizes. MSS, MTU and congestion stay zero:
// the portable syscall package cannot read them on Windows.
func Read(c syscall.RawConn) (Info, error) {
	var info Info
	err := control(c, func(fd uintptr) error {
		var err error
		h := syscall.Handle(fd)
		if info.SndBuf, err = syscall.GetsockoptInt(h, syscall.SOL_SOCKET, syscall.SO_SNDBUF); err != nil {
			return fmt.Errorf("reading SO_SNDBUF: %w", err)
		}
		if info.RcvBuf, err = syscall.GetsockoptInt(h, syscall.SOL_SOCKET, syscall.SO_RCVBUF); err != nil {
			return fmt.Errorf("reading SO_RCVBUF: %w", err)
		}
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	return info, nil
}
