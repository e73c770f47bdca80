package session

import (
	"fmt"
	"net"
	"strconv"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

func localLimits() *result.Limits {
	// A network namespace hides some of these (net.core.rmem_max); what
	// could be read is still worth reporting.
	l, err := hostmon.ReadLimits()
	if err != nil && l.RmemMax == 0 && l.TCPRmem[2] == 0 && l.Congestion == "" {
		return nil
	}
	return &result.Limits{
		RmemMax: l.RmemMax, WmemMax: l.WmemMax,
		TCPRmem: l.TCPRmem, TCPWmem: l.TCPWmem,
		Congestion: l.Congestion, DefaultQdisc: l.DefaultQdisc,
	}
}

// socketOptions are the data-socket options a spec asks for on one end.
// The MSS goes on the client's socket before connect, where it is
// announced in the SYN and so binds both directions.
func socketOptions(s spec.Spec, client bool) sockopt.Options {
	o := sockopt.Options{
		SndBuf:     int(s.Window),
		RcvBuf:     int(s.Window),
		NoDelay:    s.NoDelay,
		Congestion: s.Congestion,
		TOS:        s.TOS,
	}
	if client {
		o.MSS = s.MSS
	}
	if s.Protocol == spec.TCP && s.Rate > 0 {
		o.MaxPacingRate = uint64(s.Rate / 8) // -b for TCP: the kernel paces each stream
	}
	return o
}

// setNagle matches iperf's meaning of -N: Go turns Nagle's algorithm off
// on every TCP connection, so without -N we turn it back on.
func setNagle(c *net.TCPConn, s spec.Spec) { _ = c.SetNoDelay(s.NoDelay) }

// hostPort renders an address as "host port N", iperf style.
func hostPort(a net.Addr) (string, int) {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String(), 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}

// newTCPStream wraps a data connection, with sendfile for a sender when
// the spec asks for -Z.
func newTCPStream(id int, sender bool, c *net.TCPConn, s spec.Spec) (*tcpflow.Stream, error) {
	st := tcpflow.NewStream(id, sender, c)
	if sender && s.ZeroCopy {
		if err := st.UseZeroCopy(s.Length); err != nil {
			return nil, fmt.Errorf("-Z: %w", err)
		}
	}
	return st, nil
}
