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
)

// runner drives one end's streams: it starts them, cuts intervals, keeps
// the omitted start out of the totals and builds the end's final view.
type runner struct {
	spec       spec.Spec
	flows      []flow
	sockets    map[int]result.Socket
	onInterval func(result.Interval) // called from the interval goroutine

	epoch    time.Time
	cpuStart hostmon.CPUTimes
	cpuErr   error
	// The host's UDP counters when a UDP test began: their change says
	// where lost datagrams were dropped.
	udpStart *hostmon.UDPCounters
	// host is the CPU and interrupt counters at the start, when the spec
	// asks for them (hostcounters.go).
	host *hostCounterStart

	mu        sync.Mutex
	intervals []result.Interval
	prev      map[int]int64 // bytes at the last interval boundary
	omitSnap  map[int]int64 // bytes at the end of the omitted start
	lastCut   time.Duration // the schedule's last boundary
	lastEnd   time.Duration // when the last interval really closed
	index     int
	stopTick  chan struct{}
	tickDone  chan struct{}
}

func newRunner(s spec.Spec, flows []flow, sockets map[int]result.Socket, onInterval func(result.Interval)) *runner {
	return &runner{
		spec:       s,
		flows:      flows,
		sockets:    sockets,
		onInterval: onInterval,
		prev:       map[int]int64{},
		stopTick:   make(chan struct{}),
		tickDone:   make(chan struct{}),
	}
}

// start begins moving data now. Senders of one direction share a budget
// so that -n counts bytes across streams, as iperf does.
func (r *runner) start() {
	r.epoch = time.Now()
	r.cpuStart, r.cpuErr = hostmon.ProcessCPU()
	if r.spec.Protocol == spec.UDP {
		if c, err := hostmon.ReadUDP(); err == nil {
			r.udpStart = &c
		}
	}
	r.host = startHostCounters(r.spec) // hostcounters.go
	r.enableArrivals()
	budget := tcpflow.NewBudget(r.spec.Bytes)
	for _, f := range r.flows {
		f.start(r.epoch, budget)
	}
	if r.spec.Omit == 0 {
		r.omitSnap = map[int]int64{}
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
			r.cut(next, time.Since(r.epoch), true)
		}
	}
}

// cut closes the interval whose scheduled end is `at`; it really closes
// at `actual` (a loaded machine wakes the timer late), and the report
// shows the real span so that bytes and time agree. emit is false for the
// tail cut of a test without interval reports.
func (r *runner) cut(at, actual time.Duration, emit bool) {
	r.mu.Lock()
	omitted := at <= r.spec.Omit && r.spec.Omit > 0
	iv := result.Interval{
		Index:   r.index,
		Start:   r.lastEnd.Seconds(),
		End:     max(actual, r.lastEnd).Seconds(),
		Omitted: omitted,
	}
	now := map[int]int64{}
	for _, f := range r.flows {
		b := f.bytes()
		si := result.StreamInterval{ID: f.id(), Sender: f.sender(), Bytes: b - r.prev[f.id()]}
		f.sample(&si, !omitted)
		now[f.id()] = b
		iv.Streams = append(iv.Streams, si)
	}
	r.prev = now
	if r.spec.Omit > 0 && at == r.spec.Omit {
		r.omitSnap = now
		for _, f := range r.flows {
			f.markOmitEnd()
		}
	}
	r.lastCut = at
	r.lastEnd = max(actual, r.lastEnd)
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

// stopSenders ends the local senders now.
func (r *runner) stopSenders() {
	for _, f := range r.flows {
		if f.sender() {
			f.stop(time.Now())
		}
	}
}

// drainReceivers gives the local receivers until drain from now to read
// what is still in flight: the peer's senders have stopped.
func (r *runner) drainReceivers(drain time.Duration) {
	deadline := time.Now().Add(drain)
	for _, f := range r.flows {
		if !f.sender() {
			f.stop(deadline)
		}
	}
}

// abort ends every flow at once.
func (r *runner) abort() {
	for _, f := range r.flows {
		f.abort()
	}
}

// sendersDone is closed when every sending flow has finished.
func (r *runner) sendersDone() <-chan struct{} {
	return flowsDone(r.flows, func(f flow) bool { return f.sender() })
}

// done is closed when every flow has finished.
func (r *runner) done() <-chan struct{} {
	return flowsDone(r.flows, func(flow) bool { return true })
}

// sentCounts is what the local senders sent, by stream: datagrams for UDP,
// bytes for TCP.
func (r *runner) sentCounts() map[int]int64 {
	out := map[int]int64{}
	for _, f := range r.flows {
		if uf, ok := f.(*udpFlow); ok && f.sender() {
			out[f.id()] = uf.snd.Sent()
		} else if f.sender() {
			out[f.id()] = f.bytes()
		}
	}
	return out
}

// setPeerSent tells UDP receivers how many datagrams their peer sent, so
// that loss at the tail is counted.
func (r *runner) setPeerSent(sent map[int]int64) {
	for _, f := range r.flows {
		if uf, ok := f.(*udpFlow); ok && !f.sender() {
			if n, ok := sent[f.id()]; ok {
				uf.peerSent = n
			}
		}
	}
}

// finish stops the interval clock, reports the last partial interval and
// returns the end's view. Call it once every stream is done.
func (r *runner) finish(role string) result.End {
	close(r.stopTick)
	<-r.tickDone
	var tail time.Duration
	for _, f := range r.flows {
		tail = max(tail, f.lastByte())
	}
	if tail < r.lastCut {
		tail = r.lastCut
	}
	// The tail interval carries the bytes after the last boundary, so that
	// interval bytes always add up to the total.
	if tail > r.lastCut {
		r.cut(tail, tail, r.tailWorthReporting(tail))
	}
	end := result.End{Role: role, Host: localHost()}
	if cpu, err := hostmon.ProcessCPU(); err == nil && r.cpuErr == nil {
		u, s, t := hostmon.Usage(r.cpuStart, cpu)
		end.CPU = result.CPU{UserPercent: u, SystemPercent: s, TotalPercent: t}
	}
	if r.udpStart != nil {
		if c, err := hostmon.ReadUDP(); err == nil {
			d := c.Sub(*r.udpStart)
			end.UDPCounters = &result.SNMP{
				InDatagrams: d.InDatagrams, InErrors: d.InErrors, RcvbufErrors: d.RcvbufErrors,
				SndbufErrors: d.SndbufErrors, NoPorts: d.NoPorts, InCsumErrors: d.InCsumErrors,
				OutDatagrams: d.OutDatagrams, MemErrors: d.MemErrors,
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	end.Intervals = r.intervals
	for _, f := range r.flows {
		local, remote := f.addrs()
		rs := result.Stream{
			ID:         f.id(),
			Sender:     f.sender(),
			LocalAddr:  local,
			RemoteAddr: remote,
			Socket:     r.sockets[f.id()],
			Start:      r.spec.Omit.Seconds(),
			End:        max(f.lastByte(), r.spec.Omit).Seconds(),
			Bytes:      f.bytes() - r.omitSnap[f.id()],
		}
		f.total(&rs)
		end.Streams = append(end.Streams, rs)
	}
	end.HostCounters = r.host.finish() // hostcounters.go
	end.UDPArrivals = r.udpArrivals()
	return end
}

// tailWorthReporting drops a sliver of an interval at the very end (under
// 5% of the interval) unless it carried data.
func (r *runner) tailWorthReporting(tail time.Duration) bool {
	if r.spec.Interval == 0 {
		return false
	}
	for _, f := range r.flows {
		if f.bytes() != r.prev[f.id()] {
			return true
		}
	}
	return tail-r.lastCut >= r.spec.Interval/20
}

// firstError is the first data-plane error of any stream.
func (r *runner) firstError() error {
	for _, f := range r.flows {
		if err := f.err(); err != nil {
			return err
		}
	}
	return nil
}
