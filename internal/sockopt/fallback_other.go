//go:build !linux && !darwin && !windows

package sockopt

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// Apply is implemented for Linux, macOS and Windows only; elsewhere any
// requested option fails, naming the first one.
func Apply(c syscall.RawConn, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	switch {
	case o.SndBuf != 0:
		return unsupported("SO_SNDBUF", o.SndBuf)
	case o.RcvBuf != 0:
		return unsupported("SO_RCVBUF", o.RcvBuf)
	case o.MSS != 0:
		return unsupported("TCP_MAXSEG", o.MSS)
	case o.NoDelay:
		return unsupported("TCP_NODELAY", true)
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
	return nil
}

// Read is implemented for Linux, macOS and Windows only.
func Read(c syscall.RawConn) (Info, error) {
	return Info{}, fmt.Errorf("reading socket options: not available on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
