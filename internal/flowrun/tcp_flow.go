package flowrun

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/tcpflow"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// TCPFlow is a TCP stream with its sender-side TCP_INFO record: the
// figures sampled at each interval cut, and a timeline sampled at the
// TCP_INFO period (spec.Spec.TimelinePeriod) by a tcpinfo.Sampler.
type TCPFlow struct {
	s           *tcpflow.Stream
	length      int
	prevRetrans uint32
	omitRetrans uint32
	// prevCalls and omitCalls are the stream's calls at the last cut and
	// at the omitted start's end: a row's calls and the total's are
	// counted from one counter, so the rows add up to the total.
	prevCalls  int64
	omitCalls  int64
	last       *tcpinfo.Info
	maxCwnd    uint64
	maxSndWnd  uint64
	minRTT     uint32
	maxRTT     uint32
	sumRTT     uint64
	rttSamples uint64

	// lastCut is the TCP_INFO read at the latest interval cut, and
	// omitInfo the one at the end of the omitted start: the counted
	// span's counters are the final ones less these.
	lastCut  *tcpinfo.Info
	omitInfo *tcpinfo.Info

	sampler *tcpinfo.Sampler
	share   int // of the end's timeline samples (Begin.TimelineSamples)
	tl      timelineFigures

	// basic keeps to iperf3's figures (NewBasicTCPFlow); finalInfo says
	// whether the final TCP_INFO read succeeded.
	basic     bool
	finalInfo bool
	period    time.Duration // of the TCP_INFO timeline; 0: none

	// The kernel's counts (kernel.go): a receiver's bytes taken in, a
	// sender's bytes acknowledged, each less what the connection carried
	// before the test (its hello).
	kern kernelCounts
	// drained is the sender's TCP_INFO once its send queue drained
	// (Settle), read once and used by the tail row and the totals.
	drained    *tcpinfo.Info
	drainedErr error
	settled    bool

	mp mptcpFlow // mptcp.go
}

// NewTCPFlow is a TCP stream with the full sender record: interval
// figures, a TCP_INFO timeline, and totals read once the send queue has
// drained.
func NewTCPFlow(s *tcpflow.Stream, length int, timelinePeriod time.Duration) *TCPFlow {
	return &TCPFlow{s: s, length: length, period: timelinePeriod, minRTT: ^uint32(0)}
}

// NewBasicTCPFlow is a TCP stream with iperf3's figures only: interval
// figures and retransmits, the last TCP_INFO read at the end without
// waiting for the send queue to drain, no timeline and no TCPStats.
func NewBasicTCPFlow(s *tcpflow.Stream, length int) *TCPFlow {
	f := NewTCPFlow(s, length, 0)
	f.basic = true
	return f
}

// FinalInfo reports whether Total read the sender's final TCP_INFO.
func (f *TCPFlow) FinalInfo() bool { return f.finalInfo }

func (f *TCPFlow) ID() int                 { return f.s.ID }
func (f *TCPFlow) Sender() bool            { return f.s.Sender }
func (f *TCPFlow) Stop(deadline time.Time) { f.s.Stop(deadline) }
func (f *TCPFlow) Abort()                  { f.s.Abort() }
func (f *TCPFlow) Done() <-chan struct{}   { return f.s.Done() }
func (f *TCPFlow) Err() error              { return f.s.Err() }

// Bytes is what the stream moved: a sender's writes; a receiver's bytes as
// the kernel took them in, where it reports them, else its reads.
func (f *TCPFlow) Bytes() int64 {
	if f.s.Sender || f.basic {
		return f.s.Bytes()
	}
	return f.kern.received(f.s)
}

// beforeCut updates a receiver's out-of-order hold for the cut about to
// read its bytes.
func (f *TCPFlow) beforeCut() {
	if !f.s.Sender && !f.basic {
		f.kern.cutReceiver(f.s)
	}
}

// LastByte is when the stream last moved a byte: a sender's last write; a
// receiver's last arrival as the kernel saw it, once settled. That can be
// earlier than its last read (the reader ran late) or later (the drain's
// deadline stopped the reader while data still arrived, which the kernel
// counted all the same).
func (f *TCPFlow) LastByte() time.Duration {
	if at := f.kern.arrival(); !f.s.Sender && at > 0 {
		return at
	}
	return f.s.LastByte()
}
func (f *TCPFlow) FirstByte() time.Duration { return f.s.FirstByte() }
func (f *TCPFlow) Close() error {
	if f.sampler != nil { // a flow closed without its total
		f.sampler.Stop()
		f.sampler = nil
	}
	return f.s.Close()
}

// samples reports whether the flow keeps a TCP_INFO timeline: a sender
// with a period (a basic flow has none).
func (f *TCPFlow) samples() bool { return f.s.Sender && f.period > 0 }

func (f *TCPFlow) Start(b Begin) {
	f.share = b.TimelineSamples
	if f.samples() {
		if rc, err := f.s.SyscallConn(); err == nil {
			f.sampler = tcpinfo.NewSampler(rc, tcpinfo.SamplerConfig{
				Period: f.period, Epoch: b.Epoch, Until: f.s.Done(), OnSample: f.tl.add,
			})
			f.sampler.Start()
		}
	}
	f.startMPTCP()
	if !f.basic && !f.mp.multipath {
		f.kern.begin(f.s)
	}
	f.s.Start(b.Epoch, make([]byte, f.length), b.Budget)
}

func (f *TCPFlow) Addrs() (string, string) {
	return f.s.Conn.LocalAddr().String(), f.s.Conn.RemoteAddr().String()
}

func (f *TCPFlow) Sample(si *result.StreamInterval, counted bool) {
	calls := f.s.Calls()
	si.Calls, f.prevCalls = calls-f.prevCalls, calls
	if !f.s.Sender {
		if trip := f.s.Trip(); trip != nil {
			si.TripTimes = trip.Interval()
		}
		f.kern.sampleReceiver(f.s, si)
		return
	}
	info, err := f.infoAtCut()
	if err != nil {
		return
	}
	f.kern.sampleSender(info, si)
	si.HasTCPInfo = true
	retrans := f.retransmits(info)
	si.Retransmits = int64(retrans) - int64(f.prevRetrans)
	si.CwndBytes = info.CwndBytes()
	si.SndWnd = uint64(info.SndWnd)
	si.RTTus = info.RTTus
	si.RTTVarus = info.RTTVarus
	si.PMTU = info.PMTU
	f.prevRetrans = retrans
	f.lastCut = info
	if counted {
		f.accumulate(info)
	}
}

// callsSinceCut reports whether the stream made calls after the last
// cut sampled them.
func (f *TCPFlow) callsSinceCut() bool { return f.s.Calls() != f.prevCalls }

func (f *TCPFlow) MarkOmitEnd() {
	f.omitRetrans = f.prevRetrans
	f.omitCalls = f.prevCalls
	f.omitInfo = f.lastCut
	f.tl.markOmitEnd()
	if trip := f.s.Trip(); trip != nil {
		trip.ResetTotal()
	}
}

func (f *TCPFlow) accumulate(info *tcpinfo.Info) {
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

func (f *TCPFlow) Total(rs *result.Stream) {
	rs.Calls = f.s.Calls() - f.omitCalls
	if rc, err := f.s.SyscallConn(); err == nil {
		// Autotuning grows the buffers during the test; the granted ones
		// are only where they started.
		if info, err := sockopt.Read(rc); err == nil {
			rs.Socket.SndBufFinal, rs.Socket.RcvBufFinal = int64(info.SndBuf), int64(info.RcvBuf)
		}
	}
	if !f.s.Sender {
		rs.ReadLengths = f.s.ReadLengths()
		if trip := f.s.Trip(); trip != nil {
			rs.TripTimes = trip.Total()
		}
		f.totalMPTCP(rs)
		return
	}
	if f.basic {
		if info, err := tcpinfo.FromConn(f.s); err == nil {
			f.finalInfo = true
			f.accumulate(info)
			rs.Retransmits = int64(f.retransmits(info)) - int64(f.omitRetrans)
		}
		f.totalRecord(rs)
		f.totalMPTCP(rs)
		return
	}
	var tl tcpinfo.Timeline
	if f.sampler != nil {
		tl = f.sampler.Stop()
	}
	f.Settle()
	info, err := f.drained, f.drainedErr
	if err == nil {
		f.finalInfo = true
		f.accumulate(info)
		rs.Retransmits = int64(f.retransmits(info)) - int64(f.omitRetrans)
		rs.TCPStats = f.stats(info)
	}
	f.totalRecord(rs)
	switch {
	case errors.Is(err, tcpinfo.ErrUnsupported):
		rs.TCPTimeline = &result.TCPTimeline{Samples: []result.TCPSample{}, Unavailable: tcpinfo.Unavailable()}
	case f.sampler != nil:
		rs.TCPTimeline = timelineOf(tl, f.share)
	}
	f.sampler = nil
	f.totalMPTCP(rs)
}

// Settle reads what the kernel counted once the stream is over: a
// sender's TCP_INFO once its send queue has drained, so that the tail row
// holds what the receiver acknowledged after the last write; a receiver's
// last arrival. The runner calls it before it cuts the tail.
func (f *TCPFlow) Settle() {
	if f.settled {
		return
	}
	f.settled = true
	if !f.s.Sender {
		if !f.basic {
			f.kern.settleReceiver(f.s)
		}
		return
	}
	if !f.basic {
		f.drained, f.drainedErr = f.drainedInfo()
		if f.drainedErr == nil {
			f.mp.drainedRetrans = f.retransmits(f.drained)
		}
	}
}

// infoAtCut is the sender's TCP_INFO for an interval cut: once the
// stream has settled, the drained one.
func (f *TCPFlow) infoAtCut() (*tcpinfo.Info, error) {
	if f.settled && f.drained != nil {
		return f.drained, nil
	}
	return tcpinfo.FromConn(f.s)
}

// totalRecord adds the figures accumulated over the counted span.
func (f *TCPFlow) totalRecord(rs *result.Stream) {
	rs.TCPInfo = f.last
	rs.MaxCwnd, rs.MaxSndWnd = f.maxCwnd, f.maxSndWnd
	if f.rttSamples > 0 {
		rs.MinRTTus, rs.MaxRTTus = f.minRTT, f.maxRTT
		rs.MeanRTTus = uint32(f.sumRTT / f.rttSamples)
	}
}

// drainedInfo reads TCP_INFO once everything the sender wrote has left
// the socket and been acknowledged, so that the counters (bytes sent and
// retransmitted) cover the whole transfer: when the sender stops, its
// socket buffer may still hold a good part of what it wrote. It waits at
// most about the time the backlog needs, and not at all for a stream
// that failed.
func (f *TCPFlow) drainedInfo() (*tcpinfo.Info, error) {
	info, err := tcpinfo.FromConn(f.s)
	if err != nil || f.s.Err() != nil {
		return info, err
	}
	bound := time.Second + 4*time.Duration(info.RTTus)*time.Microsecond
	if info.DeliveryRate > 0 {
		backlog := float64(info.NotsentBytes) + float64(info.Unacked)*float64(info.SndMSS)
		bound += time.Duration(2 * backlog / float64(info.DeliveryRate) * float64(time.Second))
	}
	deadline := time.Now().Add(min(bound, maxDrainWait))
	for (info.Unacked > 0 || info.NotsentBytes > 0 || f.subflowsBusy()) && sending(info.State) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		next, err := tcpinfo.FromConn(f.s)
		if err != nil {
			break
		}
		info = next
	}
	return info, nil
}

// maxDrainWait bounds drainedInfo's wait.
const maxDrainWait = 10 * time.Second

// sending reports whether a TCP state can still deliver what the sender
// wrote: ESTABLISHED, FIN_WAIT1 (our FIN not yet acknowledged),
// CLOSE_WAIT and LAST_ACK. A reset connection (CLOSE) cannot.
func sending(state uint8) bool {
	switch state {
	case 1, 4, 8, 9:
		return true
	}
	return false
}

// stats are the counted span's TCP counters: the final TCP_INFO less its
// values at the end of the omitted start.
func (f *TCPFlow) stats(final *tcpinfo.Info) *result.TCPStats {
	var base tcpinfo.Info
	if f.omitInfo != nil {
		base = *f.omitInfo
	}
	sub := func(a, b uint64) uint64 { return a - min(a, b) }
	st := &result.TCPStats{
		BytesSent:       sub(final.BytesSent, base.BytesSent),
		BytesRetrans:    sub(final.BytesRetrans, base.BytesRetrans),
		BytesAcked:      sub(final.BytesAcked, base.BytesAcked),
		BusyUs:          sub(final.BusyTimeus, base.BusyTimeus),
		RwndLimitedUs:   sub(final.RwndLimitedus, base.RwndLimitedus),
		SndbufLimitedUs: sub(final.SndbufLimitedus, base.SndbufLimitedus),
		BaselineRTTus:   final.MinRTTus,
		MaxSndWnd:       f.maxSndWnd,
	}
	f.tl.fill(st)
	if st.RTTSamples == 0 && f.rttSamples > 0 { // no timeline: the interval samples
		st.MeanRTTus, st.RTTSamples = uint32(f.sumRTT/f.rttSamples), int(f.rttSamples)
	}
	return st
}

// timelineFigures are what the timeline shows at full resolution, kept
// as the samples come (the timeline itself may be thinned).
type timelineFigures struct {
	mu          sync.Mutex
	sumRTT      uint64
	rttSamples  int
	omitSumRTT  uint64
	omitSamples int
	maxSndWnd   uint64
	prevRetrans uint32
	prevSsth    uint32
	reductions  int
	slowStart   *result.SlowStart
	samples     int
	lastAt      time.Duration
}

// infiniteSsthresh is TCP_INFINITE_SSTHRESH: no slow start has ended yet.
const infiniteSsthresh = 0x7fffffff

func (tf *timelineFigures) add(s *tcpinfo.Sample) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	i := &s.Info
	if i.RTTus > 0 {
		tf.sumRTT += uint64(i.RTTus)
		tf.rttSamples++
	}
	tf.maxSndWnd = max(tf.maxSndWnd, uint64(i.SndWnd))
	lost := i.TotalRetrans > tf.prevRetrans
	if tf.slowStart == nil && (lost || i.SndSsthresh > 0 && i.SndSsthresh < infiniteSsthresh) {
		cause := result.SlowStartSsthresh
		if lost {
			cause = result.SlowStartLoss
		}
		tf.slowStart = &result.SlowStart{End: s.At.Seconds(), Cause: cause, CwndBytes: i.CwndBytes(), BytesAcked: i.BytesAcked}
		if lost {
			tf.reductions++
		}
	} else if tf.prevSsth > 0 && tf.prevSsth < infiniteSsthresh && i.SndSsthresh != tf.prevSsth {
		// ssthresh moves only on a congestion event (a loss, or ECN),
		// and CUBIC's may rise from one event to the next.
		tf.reductions++
	}
	tf.prevRetrans, tf.prevSsth = i.TotalRetrans, i.SndSsthresh
	tf.samples++
	tf.lastAt = s.At
}

func (tf *timelineFigures) markOmitEnd() {
	tf.mu.Lock()
	tf.omitSumRTT, tf.omitSamples = tf.sumRTT, tf.rttSamples
	tf.mu.Unlock()
}

func (tf *timelineFigures) fill(st *result.TCPStats) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.samples == 0 {
		return
	}
	if n := tf.rttSamples - tf.omitSamples; n > 0 {
		st.MeanRTTus, st.RTTSamples = uint32((tf.sumRTT-tf.omitSumRTT)/uint64(n)), n
	}
	st.MaxSndWnd = max(st.MaxSndWnd, tf.maxSndWnd)
	st.CwndReductions = tf.reductions
	st.SlowStart = tf.slowStart
	st.SlowStartOngoing = tf.slowStart == nil
	st.Duration = tf.lastAt.Seconds()
}

// timelineOf turns a sampler's timeline into the result's, thinned to at
// most limit samples.
func timelineOf(tl tcpinfo.Timeline, limit int) *result.TCPTimeline {
	samples, period := tl.Samples, tl.Period
	for len(samples) > max(limit, 2) {
		last := samples[len(samples)-1]
		kept := make([]tcpinfo.Sample, 0, len(samples)/2+1)
		for i := 1; i < len(samples); i += 2 {
			kept = append(kept, samples[i])
		}
		if len(samples)%2 == 1 { // the final sample fell out: it replaces the last kept
			kept[len(kept)-1] = last
		}
		samples, period = kept, 2*period
	}
	out := &result.TCPTimeline{Period: period.Seconds(), Samples: make([]result.TCPSample, 0, len(samples))}
	for _, s := range samples {
		out.Samples = append(out.Samples, sampleOf(s))
	}
	if tl.Err != nil {
		if errors.Is(tl.Err, tcpinfo.ErrUnsupported) {
			out.Unavailable = tcpinfo.Unavailable()
		} else if !errors.Is(tl.Err, syscall.EBADF) {
			out.Unavailable = fmt.Sprintf("sampling stopped early: %v", tl.Err)
		}
	}
	return out
}

func sampleOf(s tcpinfo.Sample) result.TCPSample {
	i := &s.Info
	out := result.TCPSample{
		T:     s.At.Seconds(),
		RTTus: i.RTTus, RTTVarus: i.RTTVarus, MinRTTus: i.MinRTTus,
		SndMSS: i.SndMSS, SndCwnd: i.SndCwnd, SndSsthresh: i.SndSsthresh, TotalRetrans: i.TotalRetrans,
		PacingRate: i.PacingRate, DeliveryRate: i.DeliveryRate,
		BytesAcked: i.BytesAcked, BytesRetrans: i.BytesRetrans, NotsentBytes: i.NotsentBytes,
		SndWnd: i.SndWnd, RcvWnd: i.RcvWnd,
		BusyUs: i.BusyTimeus, RwndLimitedUs: i.RwndLimitedus, SndbufLimitedUs: i.SndbufLimitedus,
	}
	if s.BBR != nil {
		out.BBRBandwidth, out.BBRMinRTTus = s.BBR.BandwidthBps, s.BBR.MinRTTus
	}
	return out
}

// maxTimelineSamples bounds the timeline samples an end reports over all
// of a test's streams. An end's final report carries them to the other
// end in one control frame (proto.MaxFrame, 1 MiB), and a sample is
// about 400 bytes of JSON, so they take at most about half of it. The
// runner shares them among the sampling streams (Begin.TimelineSamples).
const maxTimelineSamples = 1200
