package session

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpflow"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// tcpFlow is a TCP stream with its sender-side TCP_INFO record.
type tcpFlow struct {
	s           *tcpflow.Stream
	length      int
	prevRetrans uint32
	omitRetrans uint32
	last        *tcpinfo.Info
	maxCwnd     uint64
	maxSndWnd   uint64
	minRTT      uint32
	maxRTT      uint32
	sumRTT      uint64
	rttSamples  uint64
}

func newTCPFlow(s *tcpflow.Stream, length int) *tcpFlow {
	return &tcpFlow{s: s, length: length, minRTT: ^uint32(0)}
}

func (f *tcpFlow) id() int                 { return f.s.ID }
func (f *tcpFlow) sender() bool            { return f.s.Sender }
func (f *tcpFlow) stop(deadline time.Time) { f.s.Stop(deadline) }
func (f *tcpFlow) abort()                  { f.s.Abort() }
func (f *tcpFlow) done() <-chan struct{}   { return f.s.Done() }
func (f *tcpFlow) bytes() int64            { return f.s.Bytes() }
func (f *tcpFlow) lastByte() time.Duration { return f.s.LastByte() }
func (f *tcpFlow) err() error              { return f.s.Err() }
func (f *tcpFlow) close() error            { return f.s.Conn.Close() }

func (f *tcpFlow) start(epoch time.Time, budget *tcpflow.Budget) {
	f.s.Start(epoch, make([]byte, f.length), budget)
}

func (f *tcpFlow) addrs() (string, string) {
	return f.s.Conn.LocalAddr().String(), f.s.Conn.RemoteAddr().String()
}

func (f *tcpFlow) sample(si *result.StreamInterval, counted bool) {
	if !f.s.Sender {
		return
	}
	info, err := tcpinfo.FromConn(f.s.Conn)
	if err != nil {
		return
	}
	si.HasTCPInfo = true
	si.Retransmits = int64(info.TotalRetrans) - int64(f.prevRetrans)
	si.CwndBytes = info.CwndBytes()
	si.SndWnd = uint64(info.SndWnd)
	si.RTTus = info.RTTus
	si.RTTVarus = info.RTTVarus
	si.PMTU = info.PMTU
	f.prevRetrans = info.TotalRetrans
	if counted {
		f.accumulate(info)
	}
}

func (f *tcpFlow) markOmitEnd() { f.omitRetrans = f.prevRetrans }

func (f *tcpFlow) accumulate(info *tcpinfo.Info) {
	f.last = info
	f.maxCwnd = max(f.maxCwnd, info.CwndBytes())
	f.maxSndWnd = max(f.maxSndWnd, uint64(info.SndWnd))
	if info.RTTus > 0 {
		f.minRTT = min(f.minRTT, info.RTTus)
		f.maxRTT = max(f.maxRTT, info.RTTus)
		f.sumRTT += uint64(info.RTTus)
		f.rttSamples++
	}
}

func (f *tcpFlow) total(rs *result.Stream) {
	rs.Calls = f.s.Calls()
	if !f.s.Sender {
		rs.ReadLengths = f.s.ReadLengths()
		return
	}
	if info, err := tcpinfo.FromConn(f.s.Conn); err == nil {
		f.accumulate(info)
		rs.Retransmits = int64(info.TotalRetrans) - int64(f.omitRetrans)
	}
	rs.TCPInfo = f.last
	rs.MaxCwnd, rs.MaxSndWnd = f.maxCwnd, f.maxSndWnd
	if f.rttSamples > 0 {
		rs.MinRTTus, rs.MaxRTTus = f.minRTT, f.maxRTT
		rs.MeanRTTus = uint32(f.sumRTT / f.rttSamples)
	}
}
