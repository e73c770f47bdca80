// Package sockopt sets and reads the socket options of wireperf's data
// sockets, so a test can show what it asked for beside what the kernel
// granted (Linux doubles buffer requests and caps them by rmem_max/wmem_max).
package sockopt

import (
	"fmt"
	"syscall"
	"time"
)

// Options are what a test asks of a data socket. Zero values mean "leave the kernel default".
type Options struct {
	SndBuf     int    // SO_SNDBUF request in bytes
	RcvBuf     int    // SO_RCVBUF request in bytes
	MSS        int    // TCP_MAXSEG (must be set before connect)
	NoDelay    bool   // TCP_NODELAY
	Congestion string // TCP_CONGESTION, e.g. "cubic", "bbr", "reno"
	TOS        int    // IP_TOS, or IPV6_TCLASS on an IPv6 socket
	// MaxPacingRate caps the socket's send rate in bytes per second
	// (SO_MAX_PACING_RATE; TCP paces itself once it is set).
	MaxPacingRate uint64
	// BindDevice binds the socket to a network interface
	// (SO_BINDTODEVICE, Linux): -X.
	BindDevice string
	// DontFragment forbids fragmenting the socket's datagrams
	// (IP_PMTUDISC_DO, and IPV6_DONTFRAG on IPv6, Linux): --dont-fragment.
	DontFragment bool
	// UserTimeout is how long unacknowledged data may stay so before the
	// kernel drops the connection (TCP_USER_TIMEOUT, Linux, in ms):
	// --snd-timeout.
	UserTimeout time.Duration
}

// Info is what the kernel granted on a connected socket.
type Info struct {
	SndBuf     int    // SO_SNDBUF as getsockopt reports it (Linux reports double the request)
	RcvBuf     int    // SO_RCVBUF as getsockopt reports it
	MSS        int    // TCP_MAXSEG
	MTU        int    // IP_MTU / IPV6_MTU of the connected route, 0 when unknown
	Congestion string // TCP_CONGESTION, "" when unknown
}

// Control returns a function for net.Dialer.Control / net.ListenConfig.Control that calls Apply.
// Control runs before connect/listen, which is when TCP_MAXSEG and the
// receive buffer (it fixes the window scale) must be set.
func Control(o Options) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		return Apply(c, o)
	}
}

// validate rejects values no platform accepts, so a typo fails the same way
// everywhere instead of being silently clamped by one kernel.
func (o Options) validate() error {
	switch {
	case o.SndBuf < 0:
		return fmt.Errorf("setting SO_SNDBUF %d: must not be negative", o.SndBuf)
	case o.RcvBuf < 0:
		return fmt.Errorf("setting SO_RCVBUF %d: must not be negative", o.RcvBuf)
	case o.MSS < 0:
		return fmt.Errorf("setting TCP_MAXSEG %d: must not be negative", o.MSS)
	case o.UserTimeout < 0:
		return fmt.Errorf("setting TCP_USER_TIMEOUT %v: must not be negative", o.UserTimeout)
	case o.TOS < 0 || o.TOS > 255:
		return fmt.Errorf("setting IP_TOS %d: must be between 0 and 255", o.TOS)
	}
	return nil
}

// setErr formats the error Apply returns: the option, the requested value, the cause.
func setErr(name string, value any, err error) error {
	if s, ok := value.(string); ok {
		return fmt.Errorf("setting %s %q: %w", name, s, err)
	}
	return fmt.Errorf("setting %s %v: %w", name, value, err)
}

// control runs f on c's descriptor and returns f's error, or the error from
// RawConn.Control itself (for example a closed connection).
func control(c syscall.RawConn, f func(fd uintptr) error) error {
	var ferr error
	if err := c.Control(func(fd uintptr) { ferr = f(fd) }); err != nil {
		return err
	}
	return ferr
}
