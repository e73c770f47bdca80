package iperf3

import (
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// runner drives one end's streams: it starts them, cuts intervals, keeps
// the omitted start out of the totals and builds the end's view. It is
// internal/session's runner made to carry UDP streams as well; the
// interval boundaries and omit handling follow it exactly.
type runner struct {
	spec       spec.Spec
	streams    []*dataStream
	onInterval func(result.Interval)

	epoch    time.Time
	cpuStart hostmon.CPUTimes
	cpuErr   error

	mu        sync.Mutex
	intervals []result.Interval
	prev      map[int]snapshot
	omitSnap  map[int]snapshot
	tcp       map[int]*tcpAccum
	lastCut   time.Duration
	index     int
	stopTick  chan struct{}
	tickDone  chan struct{}
	finished  bool
}

type snapshot struct {
	bytes   int64
	retrans uint32
	udp     udpSnap
}

type tcpAccum struct {
	last       *tcpinfo.Info
	maxCwnd    uint64
	maxSndWnd  uint64
	minRTT     uint32
	maxRTT     uint32
	sumRTT     uint64
	rttSamples uint64
}

func newRunner(s spec.Spec, streams []*dataStream, onInterval func(result.Interval)) *runner {
	return &runner{
		spec: s, streams: streams, onInterval: onInterval,
		prev: map[int]snapshot{}, tcp: map[int]*tcpAccum{},
		stopTick: make(chan struct{}), tickDone: make(chan struct{}),
	}
}

// start begins moving data now; senders share one -n budget.
func (r *runner) start() {
	r.epoch = time.Now()
	r.cpuStart, r.cpuErr = hostmon.ProcessCPU()
	budget := tcpflow.NewBudget(r.spec.Bytes)
	for _, st := range r.streams {
		st.start(r.epoch, r.spec.Length, budget)
		r.prev[st.id] = snapshot{}
	}
	if r.spec.Omit == 0 {
		r.omitSnap = map[int]snapshot{}
		for _, st := range r.streams {
			r.omitSnap[st.id] = snapshot{}
		}
	}
	go r.tick()
}

func (r *runner) nextCut(after time.Duration) time.Duration {
	iv, omit := r.spec.Interval, r.spec.Omit
	if after < omit {
		next := omit
		if iv > 0 {
			if k := (after/iv + 1) * iv; k < omit {
				next = k
			}
		}
		return next
	}
	if iv == 0 {
		return -1
	}
	return omit + ((after-omit)/iv+1)*iv
}

func (r *runner) tick() {
	defer close(r.tickDone)
	for {
		next := r.nextCut(r.lastCut)
		if next < 0 {
			<-r.stopTick
			return
		}
		timer := time.NewTimer(time.Until(r.epoch.Add(next)))
		select {
		case <-r.stopTick:
			timer.Stop()
			return
		case <-timer.C:
			r.cut(next, true)
		}
	}
}

func (r *runner) cut(at time.Duration, emit bool) {
	r.mu.Lock()
	omitted := at <= r.spec.Omit && r.spec.Omit > 0
	iv := result.Interval{Index: r.index, Start: r.lastCut.Seconds(), End: at.Seconds(), Omitted: omitted}
	now := map[int]snapshot{}
	for _, st := range r.streams {
		cur := snapshot{bytes: st.bytes()}
		prev := r.prev[st.id]
		si := result.StreamInterval{ID: st.id, Sender: st.sender, Bytes: cur.bytes - prev.bytes}
		if st.udp != nil {
			cur.udp = st.udp.snap()
			u := udpFigures(prev.udp, cur.udp, st.sender)
			si.UDP = &u
		} else if st.sender {
			if info, err := tcpinfo.FromConn(st.tcpConn()); err == nil {
				cur.retrans = info.TotalRetrans
				si.HasTCPInfo = true
				si.Retransmits = int64(info.TotalRetrans) - int64(prev.retrans)
				si.CwndBytes = info.CwndBytes()
				si.SndWnd = uint64(info.SndWnd)
				si.RTTus, si.RTTVarus, si.PMTU = info.RTTus, info.RTTVarus, info.PMTU
				if !omitted {
					r.accumulate(st.id, info)
				}
			}
		}
		now[st.id] = cur
		iv.Streams = append(iv.Streams, si)
	}
	r.prev = now
	if r.spec.Omit > 0 && at == r.spec.Omit {
		r.omitSnap = now
	}
	r.lastCut = at
	if r.spec.Interval > 0 || at <= r.spec.Omit {
		r.index++
	}
	keep := emit && r.spec.Interval > 0
	if keep {
		r.intervals = append(r.intervals, iv)
	}
	r.mu.Unlock()
	if keep && r.onInterval != nil {
		r.onInterval(iv)
	}
}

// udpFigures are a UDP stream's figures between two snapshots.
func udpFigures(from, to udpSnap, sender bool) result.UDP {
	if sender {
		return result.UDP{Sent: to.packets - from.packets, SendErrors: to.sendErrs - from.sendErrs}
	}
	u := result.UDP{
		Received:        to.packets - from.packets,
		Lost:            max(to.rx.lost-from.rx.lost, 0),
		Reordered:       to.rx.outOfOrder - from.rx.outOfOrder,
		JitterMs:        to.rx.jitter * 1000,
		JitterMethod:    "user-space clock",
		JitterSamples:   to.rx.samples - from.rx.samples,
		TimestampSource: "user-space",
	}
	u.Expected = u.Received + u.Lost
	return u
}

func (r *runner) accumulate(id int, info *tcpinfo.Info) {
	a := r.tcp[id]
	if a == nil {
		a = &tcpAccum{minRTT: ^uint32(0)}
		r.tcp[id] = a
	}
	a.last = info
	a.maxCwnd = max(a.maxCwnd, info.CwndBytes())
	a.maxSndWnd = max(a.maxSndWnd, uint64(info.SndWnd))
	if info.RTTus > 0 {
		a.minRTT = min(a.minRTT, info.RTTus)
		a.maxRTT = max(a.maxRTT, info.RTTus)
		a.sumRTT += uint64(info.RTTus)
		a.rttSamples++
	}
}

// stop ends the senders now and gives receivers until drain to read
// what is still in flight.
func (r *runner) stop(drain time.Duration) {
	deadline := time.Now().Add(drain)
	for _, st := range r.streams {
		st.stop(deadline)
	}
}

func (r *runner) abort() {
	for _, st := range r.streams {
		st.abort()
	}
}

// allDone is closed when every stream matching has finished.
func (r *runner) allDone(match func(*dataStream) bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for _, st := range r.streams {
			if match(st) {
				<-st.done()
			}
		}
		close(ch)
	}()
	return ch
}

func (r *runner) done() <-chan struct{} {
	return r.allDone(func(*dataStream) bool { return true })
}

// received is the bytes every receiving stream has read, since the start.
func (r *runner) received() int64 {
	var n int64
	for _, st := range r.streams {
		if !st.sender {
			n += st.bytes()
		}
	}
	return n
}

// finish stops the interval clock, reports the last partial interval and
// returns the end's view and its iperf3 results. Call it once, after
// every stream is done.
func (r *runner) finish(role string) (result.End, Results) {
	close(r.stopTick)
	<-r.tickDone
	var tail time.Duration
	for _, st := range r.streams {
		tail = max(tail, st.lastByte())
	}
	tail = max(tail, r.lastCut)
	if tail > r.lastCut {
		r.cut(tail, r.tailWorthReporting(tail))
	}
	end := result.End{Role: role, Host: localHost()}
	if cpu, err := hostmon.ProcessCPU(); err == nil && r.cpuErr == nil {
		u, s, t := hostmon.Usage(r.cpuStart, cpu)
		end.CPU = result.CPU{UserPercent: u, SystemPercent: s, TotalPercent: t}
	}
	res := Results{
		CPUTotal: Float(end.CPU.TotalPercent), CPUUser: Float(end.CPU.UserPercent), CPUSystem: Float(end.CPU.SystemPercent),
		SenderHasRetransmits: -1,
		Streams:              []StreamResults{},
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	end.Intervals = r.intervals
	omit := r.omitSnap
	if omit == nil { // the test ended inside the omitted start
		omit = r.prev
	}
	for _, st := range r.streams {
		base := omit[st.id]
		rs := result.Stream{
			ID: st.id, Sender: st.sender, LocalAddr: st.local, RemoteAddr: st.remote, Socket: st.socket,
			Start: r.spec.Omit.Seconds(),
			End:   max(st.lastByte(), r.spec.Omit).Seconds(),
			Bytes: st.bytes() - base.bytes,
			Calls: st.calls(),
		}
		wire := StreamResults{ID: Int(wireStreamID(st.id)), Bytes: Int(rs.Bytes), Retransmits: -1, EndTime: Float(rs.End - rs.Start)}
		switch {
		case st.udp != nil:
			cur := st.udp.snap()
			u := udpFigures(base.udp, cur, st.sender)
			rs.UDP = &u
			if st.sender {
				res.SenderHasRetransmits = 0
				wire.Packets, wire.OmittedPackets = Int(cur.packets), Int(base.udp.packets)
			} else {
				wire.Packets, wire.OmittedPackets = Int(cur.rx.maxSeq), Int(base.udp.rx.maxSeq)
				wire.Errors, wire.OmittedErrors = Int(cur.rx.lost), Int(base.udp.rx.lost)
				wire.Jitter = Float(cur.rx.jitter)
			}
		case st.sender:
			res.SenderHasRetransmits = 0
			if info, err := tcpinfo.FromConn(st.tcpConn()); err == nil {
				r.accumulate(st.id, info)
				rs.Retransmits = int64(info.TotalRetrans) - int64(base.retrans)
				wire.Retransmits = Int(rs.Retransmits)
				res.SenderHasRetransmits = 1
			}
			if a := r.tcp[st.id]; a != nil {
				rs.TCPInfo = a.last
				rs.MaxCwnd, rs.MaxSndWnd = a.maxCwnd, a.maxSndWnd
				if a.rttSamples > 0 {
					rs.MinRTTus, rs.MaxRTTus = a.minRTT, a.maxRTT
					rs.MeanRTTus = uint32(a.sumRTT / a.rttSamples)
				}
			}
		default:
			rs.ReadLengths = st.tcp.ReadLengths()
		}
		if rs.Socket.Congestion != "" {
			res.CongestionUsed = rs.Socket.Congestion
		}
		end.Streams = append(end.Streams, rs)
		res.Streams = append(res.Streams, wire)
	}
	return end, res
}

func (r *runner) tailWorthReporting(tail time.Duration) bool {
	if r.spec.Interval == 0 {
		return false
	}
	for _, st := range r.streams {
		if st.bytes() != r.prev[st.id].bytes {
			return true
		}
	}
	return tail-r.lastCut >= r.spec.Interval/20
}

func (r *runner) firstError() error {
	for _, st := range r.streams {
		if err := st.err(); err != nil {
			return err
		}
	}
	return nil
}
