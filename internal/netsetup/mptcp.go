package netsetup

import (
	"fmt"
	"net"
	"sync"
	"syscall"

	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// mptcpControl wraps a -m data dialer's Control (the socket options a
// spec asks for) so that an option the kernel refuses on an MPTCP socket
// fails the dial. Go dials TCP again after any failure of its MPTCP
// attempt, which would run the test on plain TCP for an option's sake;
// the retry returns the MPTCP attempt's error instead. A kernel without
// MPTCP fails before Control runs, and that fallback is the report's to
// tell (tcpinfo.GetMPTCP).
func mptcpControl(inner func(network, address string, c syscall.RawConn) error) func(network, address string, c syscall.RawConn) error {
	if inner == nil {
		return nil
	}
	var mu sync.Mutex
	var refused error
	return func(network, address string, c syscall.RawConn) error {
		mu.Lock()
		defer mu.Unlock()
		if refused != nil {
			return refused
		}
		err := inner(network, address, c)
		if err != nil && isMPTCP(c) {
			refused = fmt.Errorf("-m: %w on an MPTCP socket", err)
		}
		return err
	}
}

// isMPTCP says whether c is an MPTCP socket, connected or not.
func isMPTCP(c syscall.RawConn) bool {
	_, err := tcpinfo.GetMPTCP(c)
	return err == nil
}

// mptcpRefusal names the MPTCP connection in the error of an option the
// kernel refused on it.
func mptcpRefusal(c *net.TCPConn, err error) error {
	if err == nil {
		return nil
	}
	if raw, rerr := c.SyscallConn(); rerr == nil && isMPTCP(raw) {
		return fmt.Errorf("%w on an MPTCP connection (-m)", err)
	}
	return err
}
