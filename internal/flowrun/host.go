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
	if s.Window > 0 {
		// A request above the limit gets the limit: -w 8M with rmem_max at
		// 4 MiB is -w 4M, whatever the granted figure (doubled) says.
		if l, _ := hostmon.ReadLimits(); l.RmemMax > 0 || l.WmemMax > 0 {
			if l.WmemMax > 0 && s.Window > l.WmemMax {
				sock.SndBufCap = l.WmemMax
			}
			if l.RmemMax > 0 && s.Window > l.RmemMax {
				sock.RcvBufCap = l.RmemMax
			}
		}
	}
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
