package flowrun

import (
	"os"
	"syscall"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/version"
)

// LocalHost describes this host in an end's report.
func LocalHost() result.Host {
	name, _ := os.Hostname()
	return result.Host{Hostname: name, System: hostmon.System().String(), Version: "wireperf " + version.String()}
}

// GrantedSocket reads back what the kernel granted on a data socket.
func GrantedSocket(c syscall.Conn, s spec.Spec) result.Socket {
	sock := result.Socket{SndBufRequested: s.Window, RcvBufRequested: s.Window}
	raw, err := c.SyscallConn()
	if err != nil {
		return sock
	}
	if info, err := sockopt.Read(raw); err == nil {
		sock.SndBufGranted = int64(info.SndBuf)
		sock.RcvBufGranted = int64(info.RcvBuf)
		sock.MSS = info.MSS
		sock.MTU = info.MTU
		sock.Congestion = info.Congestion
	}
	return sock
}
