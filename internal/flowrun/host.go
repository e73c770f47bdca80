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
	sock.SndBufCap, sock.RcvBufCap = bufferCaps(sock.SndBufRequested, sock.RcvBufRequested)
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

// bufferCaps are the kernel limits that cap each request: a request
// above net.core.wmem_max (rmem_max) gets the limit, so -w 8M with
// rmem_max at 4 MiB is -w 4M, whatever the granted figure (doubled) says.
// 0 where a request is within its limit, or nothing was requested.
func bufferCaps(snd, rcv int64) (sndCap, rcvCap int64) {
	if snd <= 0 && rcv <= 0 {
		return 0, 0
	}
	l, _ := hostmon.ReadLimits()
	if l.WmemMax > 0 && snd > l.WmemMax {
		sndCap = l.WmemMax
	}
	if l.RmemMax > 0 && rcv > l.RmemMax {
		rcvCap = l.RmemMax
	}
	return sndCap, rcvCap
}
