package iperf3

import (
	"github.com/wireperf/wireperf/internal/tcpflow"
	"golang.org/x/sys/unix"
)

// unsentBytes is what a TCP stream's socket holds not yet acknowledged
// by the peer (SIOCOUTQ).
func unsentBytes(st *tcpflow.Stream) (int, error) {
	raw, err := st.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ioErr error
	if err := raw.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil {
		return 0, err
	}
	return n, ioErr
}
