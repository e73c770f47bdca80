package flowrun

import (
	"errors"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// mptcpFlow is what a TCP stream knows of MPTCP: whether the test asked
// for it (-m) and whether its connection runs it. TCP_INFO on an MPTCP
// socket is its first subflow's alone, so on such a connection the
// kernel's byte counts cannot stand for the stream's (a second subflow
// carries bytes the first never sees): its rows count the reads and
// writes, and its totals take the subflows' sum where there are several.
type mptcpFlow struct {
	asked     bool
	multipath bool
}

// AskMPTCP says the test asked for MPTCP (-m): a stream that got plain
// TCP then reports a fallback rather than nothing. It returns f.
func (f *TCPFlow) AskMPTCP(asked bool) *TCPFlow {
	f.mp.asked = asked
	return f
}

// startMPTCP reads, before the stream starts, whether its connection is
// MPTCP's.
func (f *TCPFlow) startMPTCP() {
	rc, err := f.s.SyscallConn()
	if err != nil {
		return
	}
	if m, err := tcpinfo.GetMPTCP(rc); err == nil && !m.Fallback {
		f.mp.multipath = true
	}
}

// totalMPTCP adds the connection's MPTCP figures to the stream's totals:
// each subflow's, or the fallback to TCP when MPTCP was asked for or the
// socket is MPTCP's but its connection is not.
func (f *TCPFlow) totalMPTCP(rs *result.Stream) {
	rc, err := f.s.SyscallConn()
	if err != nil {
		return
	}
	m, err := tcpinfo.GetMPTCP(rc)
	switch {
	case errors.Is(err, tcpinfo.ErrNotMPTCP) && f.mp.asked:
		rs.MPTCP = &tcpinfo.MPTCP{Fallback: true}
	case err != nil:
		return
	default:
		rs.MPTCP = m
	}
	if !f.mp.multipath || len(m.Subflows) < 2 || !f.s.Sender {
		return
	}
	// Several subflows: the first one's TCP_INFO is a part of the
	// stream, so its counters (TCPStats) and timeline would misstate it;
	// the retransmits are all the subflows'.
	rs.Retransmits = max(0, m.SubflowRetransmits()-int64(f.omitRetrans))
	rs.TCPStats, rs.TCPTimeline = nil, nil
}
