package emit

import (
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// startFacts is what iperf3's start object says, from one end's view,
// gathered from a Result or from a Header.
type startFacts struct {
	spec        spec.Spec
	token       string
	startedAt   time.Time
	connectHost string
	connectPort int
	self        result.Host
	conns       []HeaderStream // LocalAddr is this end's address
	socket      result.Socket  // this end's first data socket
}

// startFromResult takes the local end's view, as iperf3 -J does on
// whichever end writes it.
func startFromResult(r *result.Result) iperfStart {
	f := startFacts{
		spec:        r.Spec,
		token:       r.Token,
		startedAt:   r.StartedAt,
		connectHost: r.ConnectHost,
		connectPort: r.ConnectPort,
		self:        r.Local.Host,
	}
	if f.connectHost == "" {
		f.connectHost, f.connectPort = splitAddrNum(r.ServerAddr)
	}
	for _, s := range r.Local.Streams {
		f.conns = append(f.conns, HeaderStream{ID: s.ID, LocalAddr: s.LocalAddr, RemoteAddr: s.RemoteAddr})
	}
	if len(r.Local.Streams) > 0 {
		f.socket = r.Local.Streams[0].Socket
	}
	return f.start()
}

// startFromHeader takes the client's view, which is what a Header holds.
func startFromHeader(h Header) iperfStart {
	f := startFacts{spec: h.Spec, token: h.Token, startedAt: h.StartedAt, conns: h.Streams}
	if f.startedAt.IsZero() {
		f.startedAt = time.Now()
	}
	f.connectHost, f.connectPort = splitAddrNum(h.ServerAddr)
	f.self = h.Local.Host
	if h.Local.Role == result.RoleServer {
		f.self = h.Remote.Host
	}
	if socks, _ := headerSockets(h); len(socks) > 0 {
		f.socket = socks[0].sock
	}
	return f.start()
}

// iperfTimeFormat is how iperf3 writes start.timestamp.time.
const iperfTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

func (f startFacts) start() iperfStart {
	at := f.startedAt
	if at.IsZero() {
		at = time.Unix(0, 0) // unknown: the epoch, not year 1
	}
	s := iperfStart{
		Connected:     []iperfConnected{},
		Version:       versionString(f.self.Version),
		SystemInfo:    f.self.System,
		Timestamp:     iperfTimestamp{Time: at.UTC().Format(iperfTimeFormat), Timesecs: at.Unix()},
		ConnectingTo:  iperfHostPort{Host: f.connectHost, Port: f.connectPort},
		Cookie:        f.token,
		TCPMSS:        f.spec.MSS,
		TargetBitrate: f.spec.Rate,
		SockBufsize:   f.spec.Window,
		SndbufActual:  f.socket.SndBufGranted,
		RcvbufActual:  f.socket.RcvBufGranted,
		TestStart: iperfTestStart{
			Protocol:      strings.ToUpper(f.spec.Protocol),
			NumStreams:    f.spec.Streams,
			Blksize:       f.spec.Length,
			Omit:          f.spec.Omit.Seconds(),
			Duration:      f.spec.Measured().Seconds(),
			Bytes:         f.spec.Bytes,
			Reverse:       boolInt(f.spec.Reverse),
			TOS:           f.spec.TOS,
			Bidir:         boolInt(f.spec.Bidir),
			Interval:      f.spec.Interval.Seconds(),
			TargetBitrate: f.spec.Rate,
		},
	}
	if !isUDP(f.spec) {
		mss := f.socket.MSS
		s.TCPMSSDefault = &mss
	}
	for _, c := range f.conns {
		localHost, localPort := splitAddrNum(c.LocalAddr)
		remoteHost, remotePort := splitAddrNum(c.RemoteAddr)
		s.Connected = append(s.Connected, iperfConnected{
			Socket: c.ID, LocalHost: localHost, LocalPort: localPort, RemoteHost: remoteHost, RemotePort: remotePort,
		})
	}
	return s
}

// versionString reads "wireperf 1.2.0" whether or not Host.Version
// carries the name, as iperf3 writes "iperf 3.12".
func versionString(v string) string {
	switch {
	case v == "":
		return "wireperf"
	case strings.HasPrefix(v, "wireperf"):
		return v
	default:
		return "wireperf " + v
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
