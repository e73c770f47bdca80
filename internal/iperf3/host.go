package iperf3

import (
	"net"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// Observer sees a client's test as it runs; its shape is
// session.Observer's, so the CLI's observer serves both. The remote end
// of an iperf3 test reports only at the end, so interval rows carry the
// local end's figures only.
type Observer interface {
	Started(r *result.Result)
	Interval(r *result.Result, row result.IntervalRow)
}

// peerHost describes an iperf3 peer; version is its client_version when
// it told us one.
func peerHost(version string) result.Host {
	if version == "" {
		return result.Host{Version: "iperf3"}
	}
	return result.Host{Version: "iperf " + version}
}

func localLimits() *result.Limits {
	l, err := hostmon.ReadLimits()
	if err != nil {
		return nil
	}
	return &result.Limits{
		RmemMax: l.RmemMax, WmemMax: l.WmemMax, TCPRmem: l.TCPRmem, TCPWmem: l.TCPWmem,
		Congestion: l.Congestion, DefaultQdisc: l.DefaultQdisc,
	}
}

// socketOptions are the data-socket options a spec asks for on one end;
// the MSS only on the client's TCP sockets, before connect.
func socketOptions(s spec.Spec, client bool) sockopt.Options {
	o := sockopt.Options{SndBuf: int(s.Window), RcvBuf: int(s.Window), TOS: s.TOS}
	if s.Protocol == spec.TCP {
		o.NoDelay = s.NoDelay
		o.Congestion = s.Congestion
		if client {
			o.MSS = s.MSS
		}
	}
	return o
}

// applyTCPOptions sets a spec's options on an accepted TCP socket, and
// iperf3's -b as the kernel's pacing rate on a sending one.
func applyTCPOptions(c *net.TCPConn, s spec.Spec, client, sender bool) error {
	_ = c.SetNoDelay(s.NoDelay) // Go turns Nagle off; iperf3 leaves it on without -N
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	if !client {
		if err := sockopt.Apply(raw, socketOptions(s, false)); err != nil {
			return err
		}
	}
	if sender && s.Rate > 0 {
		return setPacingRate(raw, uint64(s.Rate/8))
	}
	return nil
}

// udpRcvBuf is the receive buffer a UDP receiver asks for when the spec
// sets no window: a scheduling hiccup of the receiving process should not
// show up as loss on the path (the kernel caps it at rmem_max).
const udpRcvBuf = 4 << 20

// udpControl applies a UDP spec's buffer and TOS options before bind.
func udpControl(s spec.Spec, receiver bool) func(network, address string, c syscall.RawConn) error {
	o := socketOptions(s, true)
	if receiver && o.RcvBuf == 0 {
		o.RcvBuf = udpRcvBuf
	}
	if o == (sockopt.Options{}) {
		return nil
	}
	return sockopt.Control(o)
}

// drainFor is how long a receiver keeps reading after the sender stopped:
// a few round trips of the control connection, within bounds.
func drainFor(c *net.TCPConn) time.Duration {
	d := 250 * time.Millisecond
	if c != nil {
		if info, err := tcpinfoOf(c); err == nil && info > 0 {
			d = min(max(4*info, 50*time.Millisecond), time.Second)
		}
	}
	return d
}

// tcpinfoOf is a connection's smoothed RTT.
func tcpinfoOf(c *net.TCPConn) (time.Duration, error) {
	info, err := tcpinfo.FromConn(c)
	if err != nil {
		return 0, err
	}
	return time.Duration(info.RTTus) * time.Microsecond, nil
}
