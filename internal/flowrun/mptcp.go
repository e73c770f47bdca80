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
// writes, and its retransmits are all its subflows'.
type mptcpFlow struct {
	asked     bool
	multipath bool
	// drainedRetrans is retransmits once the sender drained (Settle):
	// the tail row and the total read the same count, as they read the
	// same drained TCP_INFO.
	drainedRetrans uint32
	// last is the sender's latest reading of its connection (at a row's
	// cut or once drained), for a total read after the peer reset it;
	// lastDrained says it was read once the sender had drained.
	last        *tcpinfo.MPTCP
	lastDrained bool
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
	case (errors.Is(err, tcpinfo.ErrNotMPTCP) || errors.Is(err, tcpinfo.ErrUnsupported)) && f.mp.asked:
		// Go dials MPTCP on Linux only: elsewhere the socket is TCP's.
		rs.MPTCP = &tcpinfo.MPTCP{Fallback: true}
	case err != nil:
		return
	case f.s.Sender && f.mp.last != nil && subflowClosed(m):
		// The peer reset the connection once the test was over (iperf3's
		// server closes with data unread): a closed subflow's TCP_INFO
		// and addresses read as zero. The last reading while it ran
		// stands for it, with the connection's own counts, which a closed
		// subflow does not take with it; a reading from before the sender
		// drained says so (under load a peer's close came before the
		// sender's end and its subflow had sent 2.2 MB of 5.2 MB at the
		// reading before).
		last := *f.mp.last
		last.SubflowsEarly = !f.mp.lastDrained
		last.BytesSent, last.BytesReceived, last.BytesAcked = max(last.BytesSent, m.BytesSent), max(last.BytesReceived, m.BytesReceived), max(last.BytesAcked, m.BytesAcked)
		last.BytesRetrans, last.Retransmits = max(last.BytesRetrans, m.BytesRetrans), max(last.Retransmits, m.Retransmits)
		rs.MPTCP = &last
	default:
		rs.MPTCP = m
	}
	if !f.mp.multipath || len(m.Subflows) < 2 || !f.s.Sender {
		return
	}
	// Several subflows: the first one's TCP_INFO is a part of the
	// stream, so its counters (TCPStats) and timeline would misstate it.
	rs.TCPStats, rs.TCPTimeline = nil, nil
}

// retransmits is the sender's retransmitted segments so far: info's (the
// connection's TCP_INFO) on TCP, all subflows' on an MPTCP connection.
// A subflow that closed takes its count with it, so the sum is held
// where it was rather than let a row go negative.
func (f *TCPFlow) retransmits(info *tcpinfo.Info) uint32 {
	if !f.mp.multipath {
		return info.TotalRetrans
	}
	if f.settled && info == f.drained && f.mp.drainedRetrans != 0 {
		return f.mp.drainedRetrans
	}
	rc, err := f.s.SyscallConn()
	if err != nil {
		return max(info.TotalRetrans, f.prevRetrans)
	}
	m, err := tcpinfo.GetMPTCP(rc)
	if err != nil || len(m.Subflows) == 0 || subflowClosed(m) {
		return max(info.TotalRetrans, f.prevRetrans)
	}
	f.mp.last, f.mp.lastDrained = m, f.readDrained(info)
	return uint32(max(m.SubflowRetransmits(), int64(f.prevRetrans)))
}

// readDrained says whether info is the sender's reading once everything
// it wrote was acknowledged: Settle's, on a stream without error, with
// nothing left in the MPTCP socket's queue (its drain may have ended at
// its bound).
func (f *TCPFlow) readDrained(info *tcpinfo.Info) bool {
	if !f.settled || info != f.drained || f.drainedErr != nil || f.s.Err() != nil {
		return false
	}
	n, err := f.s.Unacked()
	return err != nil || n == 0
}

// tcpClose is TCP_CLOSE, the state of a subflow that was reset.
const tcpClose = 7

// subflowClosed says whether one of m's subflows is closed.
func subflowClosed(m *tcpinfo.MPTCP) bool {
	for _, sf := range m.Subflows {
		if sf.Info.State == tcpClose {
			return true
		}
	}
	return false
}

// subflowsBusy says whether the sender's MPTCP connection still holds
// data unacknowledged or unsent: the connection's TCP_INFO is only the
// first subflow's, and the others drain on their own paths. Data the
// application wrote waits in the MPTCP socket's own queue before a
// subflow takes it, where no subflow's TCP_INFO shows it: SIOCOUTQ on
// the MPTCP socket counts it (what the peer has not acknowledged at the
// MPTCP level). Without it a drained reading under load came before a
// subflow had sent the stream's last 641 KB, and its counts fell short
// of the stream's.
func (f *TCPFlow) subflowsBusy() bool {
	if !f.mp.multipath {
		return false
	}
	if n, err := f.s.Unacked(); err == nil && n > 0 {
		return true
	}
	rc, err := f.s.SyscallConn()
	if err != nil {
		return false
	}
	m, err := tcpinfo.GetMPTCP(rc)
	if err != nil {
		return false
	}
	for _, sf := range m.Subflows {
		if (sf.Info.Unacked > 0 || sf.Info.NotsentBytes > 0) && sending(sf.Info.State) {
			return true
		}
	}
	return false
}
