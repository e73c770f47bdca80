// Package session runs the test lifecycle on both ends: parameter
// exchange, synchronised start, interval reports, stop, and the exchange
// of each end's final report.
package session

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
// the omitted start out of the totals and builds the end's final view.
type runner struct {
	spec       spec.Spec
	streams    []*tcpflow.Stream
	sockets    map[int]result.Socket
	onInterval func(result.Interval) // called from the interval goroutine

	epoch    time.Time
	cpuStart hostmon.CPUTimes
	cpuErr   error

	mu        sync.Mutex
	intervals []result.Interval
	prev      map[int]snapshot // at the last interval boundary
	omitSnap  map[int]snapshot // at the end of the omitted start
	tcp       map[int]*tcpAccum
	lastCut   time.Duration
	index     int
	stopTick  chan struct{}
	tickDone  chan struct{}
}

// snapshot is a stream's counters at one moment.
type snapshot struct {
	bytes   int64
	retrans uint32
}

// tcpAccum keeps a sending stream's TCP figures over the counted span.
type tcpAccum struct {
	last       *tcpinfo.Info
	maxCwnd    uint64
	maxSndWnd  uint64
	minRTT     uint32
	maxRTT     uint32
	sumRTT     uint64
	rttSamples uint64
}

func newRunner(s spec.Spec, streams []*tcpflow.Stream, sockets map[int]result.Socket, onInterval func(result.Interval)) *runner {
	return &runner{
		spec:       s,
		streams:    streams,
		sockets:    sockets,
		onInterval: onInterval,
		prev:       map[int]snapshot{},
		tcp:        map[int]*tcpAccum{},
		stopTick:   make(chan struct{}),
		tickDone:   make(chan struct{}),
	}
}

// start begins moving data now. Senders of one direction share a budget
// so that -n counts bytes across streams, as iperf does.
func (r *runner) start() {
	r.epoch = time.Now()
	r.cpuStart, r.cpuErr = hostmon.ProcessCPU()
	budget := tcpflow.NewBudget(r.spec.Bytes)
	for _, st := range r.streams {
		st.Start(r.epoch, make([]byte, r.spec.Length), budget)
		r.prev[st.ID] = snapshot{}
	}
	if r.spec.Omit == 0 {
		r.omitSnap = map[int]snapshot{}
		for _, st := range r.streams {
			r.omitSnap[st.ID] = snapshot{}
		}
	}
	go r.tick()
}

// boundaries: every Interval from the start, with one forced cut at the
// end of the omitted start so that no interval straddles it.
func (r *runner) nextCut(after time.Duration) time.Duration {
	iv := r.spec.Interval
	omit := r.spec.Omit
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

// cut closes the interval that ends at `at`. emit is false for the tail
// cut of a test without interval reports.
func (r *runner) cut(at time.Duration, emit bool) {
	r.mu.Lock()
	omitted := at <= r.spec.Omit && r.spec.Omit > 0
	iv := result.Interval{
		Index:   r.index,
		Start:   r.lastCut.Seconds(),
		End:     at.Seconds(),
		Omitted: omitted,
	}
	now := map[int]snapshot{}
	for _, st := range r.streams {
		cur := snapshot{bytes: st.Bytes()}
		si := result.StreamInterval{ID: st.ID, Sender: st.Sender, Bytes: cur.bytes - r.prev[st.ID].bytes}
		if st.Sender {
			if info, err := tcpinfo.FromConn(st.Conn); err == nil {
				cur.retrans = info.TotalRetrans
				si.HasTCPInfo = true
				si.Retransmits = int64(info.TotalRetrans) - int64(r.prev[st.ID].retrans)
				si.CwndBytes = info.CwndBytes()
				si.SndWnd = uint64(info.SndWnd)
				si.RTTus = info.RTTus
				si.RTTVarus = info.RTTVarus
				si.PMTU = info.PMTU
				if !omitted {
					r.accumulate(st.ID, info)
				}
			}
		}
		now[st.ID] = cur
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

// stop ends the senders now and gives receivers until drain to read what
// is still in flight.
func (r *runner) stop(drain time.Duration) {
	deadline := time.Now().Add(drain)
	for _, st := range r.streams {
		st.Stop(deadline)
	}
}

// abort ends every stream at once.
func (r *runner) abort() {
	for _, st := range r.streams {
		st.Abort()
	}
}

// sendersDone is closed when every sending stream has finished.
func (r *runner) sendersDone() <-chan struct{} {
	return r.allDone(func(st *tcpflow.Stream) bool { return st.Sender })
}

// done is closed when every stream has finished.
func (r *runner) done() <-chan struct{} {
	return r.allDone(func(*tcpflow.Stream) bool { return true })
}

func (r *runner) allDone(match func(*tcpflow.Stream) bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for _, st := range r.streams {
			if match(st) {
				<-st.Done()
			}
		}
		close(ch)
	}()
	return ch
}

// finish stops the interval clock, reports the last partial interval and
// returns the end's view. Call it once every stream is done.
func (r *runner) finish(role string) result.End {
	close(r.stopTick)
	<-r.tickDone
	var tail time.Duration
	for _, st := range r.streams {
		tail = max(tail, st.LastByte())
	}
	if tail < r.lastCut {
		tail = r.lastCut
	}
	// The tail interval carries the bytes after the last boundary, so that
	// interval bytes always add up to the total.
	if tail > r.lastCut {
		r.cut(tail, r.tailWorthReporting(tail))
	}
	end := result.End{Role: role, Host: localHost()}
	if cpu, err := hostmon.ProcessCPU(); err == nil && r.cpuErr == nil {
		u, s, t := hostmon.Usage(r.cpuStart, cpu)
		end.CPU = result.CPU{UserPercent: u, SystemPercent: s, TotalPercent: t}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	end.Intervals = r.intervals
	for _, st := range r.streams {
		base := r.omitSnap[st.ID]
		rs := result.Stream{
			ID:         st.ID,
			Sender:     st.Sender,
			LocalAddr:  st.Conn.LocalAddr().String(),
			RemoteAddr: st.Conn.RemoteAddr().String(),
			Socket:     r.sockets[st.ID],
			Start:      r.spec.Omit.Seconds(),
			End:        max(st.LastByte(), r.spec.Omit).Seconds(),
			Bytes:      st.Bytes() - base.bytes,
			Calls:      st.Calls(),
		}
		if st.Sender {
			if info, err := tcpinfo.FromConn(st.Conn); err == nil {
				r.accumulate(st.ID, info)
				rs.Retransmits = int64(info.TotalRetrans) - int64(base.retrans)
			}
			if a := r.tcp[st.ID]; a != nil {
				rs.TCPInfo = a.last
				rs.MaxCwnd, rs.MaxSndWnd = a.maxCwnd, a.maxSndWnd
				if a.rttSamples > 0 {
					rs.MinRTTus, rs.MaxRTTus = a.minRTT, a.maxRTT
					rs.MeanRTTus = uint32(a.sumRTT / a.rttSamples)
				}
			}
		} else {
			rs.ReadLengths = st.ReadLengths()
		}
		end.Streams = append(end.Streams, rs)
	}
	return end
}

// tailWorthReporting drops a sliver of an interval at the very end (under
// 5% of the interval) unless it carried data.
func (r *runner) tailWorthReporting(tail time.Duration) bool {
	if r.spec.Interval == 0 {
		return false
	}
	for _, st := range r.streams {
		if st.Bytes() != r.prev[st.ID].bytes {
			return true
		}
	}
	return tail-r.lastCut >= r.spec.Interval/20
}

// firstError is the first data-plane error of any stream.
func (r *runner) firstError() error {
	for _, st := range r.streams {
		if err := st.Err(); err != nil {
			return err
		}
	}
	return nil
}
