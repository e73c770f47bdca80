// Package flowrun drives one end's data streams of a test, for both
// wireperf's own protocol (internal/session) and iperf3's
// (internal/iperf3): it starts them, cuts intervals, keeps the omitted
// start out of the totals and builds the end's final view.
package flowrun

import (
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Runner drives one end's streams: it starts them, cuts intervals, keeps
// the omitted start out of the totals and builds the end's final view.
type Runner struct {
	// Iperf3Accounting keeps iperf3's accounting (internal/iperf3):
	// intervals span their scheduled boundaries rather than when they
	// really closed, a test that ends inside the omitted start counts
	// nothing, and the host's UDP, CPU and interrupt counters are not
	// read. Set it before Start.
	Iperf3Accounting bool
	// MaxStreamRows, when set, bounds the rows the end keeps for Finish,
	// in stream rows (rows × the end's streams, ServerStreamRows on a
	// server): past it the kept rows are joined (keptRows). Every row
	// still goes to onInterval as it is cut. 0 keeps every row: a
	// client's own test, whose rows are its user's to keep. Set it before
	// Start.
	MaxStreamRows int

	spec       spec.Spec
	flows      []Flow
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
	host *HostCounterStart

	mu        sync.Mutex
	intervals keptRows
	prev      map[int]int64 // bytes at the last interval boundary
	omitSnap  map[int]int64 // bytes at the end of the omitted start
	// countFrom is when omitSnap was read: the end of the omitted start,
	// or later when a loaded machine woke the interval goroutine late.
	// The totals count from it, as their bytes do.
	countFrom time.Duration
	lastCut   time.Duration // the schedule's last boundary
	lastEnd   time.Duration // when the last interval really closed
	drainFrom time.Duration // when the receivers learned the peer's senders stopped; 0: not yet
	// stoppedAt is when StopSenders ran, since the epoch; 0: not yet.
	stoppedAt time.Duration
	index     int
	stopTick  chan struct{}
	tickDone  chan struct{}
}

// New is a runner for one end's flows; sockets are what each stream's
// socket asked for and was granted, by stream id, and onInterval sees
// every interval as it closes (called from the interval goroutine; nil
// for none).
func New(s spec.Spec, flows []Flow, sockets map[int]result.Socket, onInterval func(result.Interval)) *Runner {
	return &Runner{
		spec:       s,
		flows:      flows,
		sockets:    sockets,
		onInterval: onInterval,
		prev:       map[int]int64{},
		stopTick:   make(chan struct{}),
		tickDone:   make(chan struct{}),
	}
}

// Start begins moving data now. Senders of one direction share a budget
// so that -n counts bytes across streams, as iperf does, and the streams
// that keep a TCP_INFO timeline share the room the end's report has.
func (r *Runner) Start() {
	r.epoch = time.Now()
	r.intervals.max = 0
	if r.MaxStreamRows > 0 {
		r.intervals.max = maxKeptRows(r.MaxStreamRows, len(r.flows))
	}
	r.cpuStart, r.cpuErr = hostmon.ProcessCPU()
	if !r.Iperf3Accounting { // iperf3's runner never read these
		if r.spec.Protocol == spec.UDP {
			if c, err := hostmon.ReadUDP(); err == nil {
				r.udpStart = &c
			}
		}
		r.host = StartHostCounters(r.spec) // hostcounters.go
	}
	r.enableArrivals()
	b := Begin{Epoch: r.epoch, Budget: NewBudget(r.spec.Bytes), TimelineSamples: maxTimelineSamples}
	sampling := 0
	for _, f := range r.flows {
		if tf, ok := f.(*TCPFlow); ok && tf.samples() {
			sampling++
		}
	}
	b.TimelineSamples /= max(sampling, 1)
	for _, f := range r.flows {
		f.Start(b)
	}
	if r.spec.Omit == 0 {
		r.omitSnap = map[int]int64{}
	}
	go r.tick()
}

// boundaries: every Interval from the start, with one forced cut at the
// end of the omitted start so that no interval straddles it.
func (r *Runner) nextCut(after time.Duration) time.Duration {
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

func (r *Runner) tick() {
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
			if r.ending(next) {
				// The data has stopped: the rest is the tail, which
				// Finish cuts at the last byte, so that no row spans
				// time in which the test had ended.
				<-r.stopTick
				return
			}
			r.cut(next, false)
		}
	}
}

// ending reports whether the boundary at next falls after this end's
// data stopped moving: its senders were stopped, or it learned that the
// peer's had, and no byte moved in the last tenth of the interval before
// the boundary. A receiver goes on taking in the sender's socket buffer
// and the path's queue for up to a round trip and more after the stop,
// and those rows are cut as usual; once its data has stopped, the rest is
// the tail. (A stop a hair before a boundary, as a loaded machine's
// timers give, still has its row cut there.)
func (r *Runner) ending(next time.Duration) bool {
	if r.Iperf3Accounting {
		return false
	}
	r.mu.Lock()
	end := r.drainFrom
	if r.stoppedAt > 0 && (end == 0 || r.stoppedAt < end) {
		end = r.stoppedAt
	}
	r.mu.Unlock()
	slack := r.spec.Interval / 10
	if end == 0 || next <= end+slack {
		return false
	}
	var last time.Duration
	for _, f := range r.flows {
		last = max(last, f.LastByte())
	}
	return last < next-slack
}

// cut closes the interval whose scheduled end is `at` (the tail's: the
// last byte). A loaded machine wakes the timer late, so the row shows
// when its counters were really read: the middle of the reads, which
// bounds the error by half the time they took, where a time taken before
// them would let a late reader's bytes inflate the row. Every cut samples
// every flow once, so a flow's k-th sample is the interval of index k.
func (r *Runner) cut(at time.Duration, tail bool) { r.cutRead(at, tail, -1) }

// cutRead is cut with the row's end given as readAt when it is not
// negative: the counters are known to have stood still since then.
func (r *Runner) cutRead(at time.Duration, tail bool, readAt time.Duration) {
	r.mu.Lock()
	omitted := at <= r.spec.Omit && r.spec.Omit > 0
	before := time.Since(r.epoch)
	for _, f := range r.flows {
		if c, ok := f.(interface{ beforeCut() }); ok {
			c.beforeCut()
		}
	}
	now := map[int]int64{}
	var streams []result.StreamInterval
	for _, f := range r.flows {
		b := f.Bytes()
		si := result.StreamInterval{ID: f.ID(), Sender: f.Sender(), Bytes: b - r.prev[f.ID()]}
		f.Sample(&si, !omitted)
		now[f.ID()] = b
		streams = append(streams, si)
	}
	actual := before + (time.Since(r.epoch)-before)/2
	switch {
	case r.Iperf3Accounting:
		actual = at
	case tail:
		actual = at // the last byte
	case readAt >= 0:
		actual = readAt
	}
	iv := result.Interval{
		Index:   r.index,
		Start:   r.lastEnd.Seconds(),
		End:     max(actual, r.lastEnd).Seconds(),
		Omitted: omitted,
		Tail:    tail,
		Streams: streams,
	}
	r.prev = now
	if r.spec.Omit > 0 && at == r.spec.Omit {
		r.omitSnap, r.countFrom = now, max(actual, at)
		for _, f := range r.flows {
			f.MarkOmitEnd()
		}
	}
	r.lastCut = at
	r.lastEnd = max(actual, r.lastEnd)
	if r.spec.Interval > 0 || at <= r.spec.Omit {
		r.index++
	}
	keep := r.spec.Interval > 0
	if keep {
		r.intervals.add(iv)
	}
	r.mu.Unlock()
	if keep {
		r.host.Sample() // the host's use over the same interval (hostcounters.go)
	}
	if keep && r.onInterval != nil {
		r.onInterval(iv)
	}
}

// StopSenders ends the local senders now.
func (r *Runner) StopSenders() {
	r.mu.Lock()
	if r.stoppedAt == 0 && r.has(true) {
		r.stoppedAt = max(time.Since(r.epoch), 1)
	}
	r.mu.Unlock()
	for _, f := range r.flows {
		if f.Sender() {
			f.Stop(time.Now())
		}
	}
}

// DrainReceivers gives the local receivers until drain from now to read
// what is still in flight: the peer's senders have stopped.
func (r *Runner) DrainReceivers(drain time.Duration) {
	r.mu.Lock()
	if r.drainFrom == 0 && r.has(false) {
		r.drainFrom = max(time.Since(r.epoch), 1)
	}
	r.mu.Unlock()
	deadline := time.Now().Add(drain)
	for _, f := range r.flows {
		if !f.Sender() {
			f.Stop(deadline)
		}
	}
}

// Abort ends every flow at once.
func (r *Runner) Abort() {
	for _, f := range r.flows {
		f.Abort()
	}
}

// has reports whether the end has a sending (sender) or a receiving
// flow. An end without senders reports them done at once, and its peer's
// word that they stopped must not end a test that has not begun.
func (r *Runner) has(sender bool) bool {
	for _, f := range r.flows {
		if f.Sender() == sender {
			return true
		}
	}
	return false
}

// SendersDone is closed when every sending flow has finished.
func (r *Runner) SendersDone() <-chan struct{} {
	return flowsDone(r.flows, func(f Flow) bool { return f.Sender() })
}

// ReceiversDone is closed when every receiving flow has finished.
func (r *Runner) ReceiversDone() <-chan struct{} {
	return flowsDone(r.flows, func(f Flow) bool { return !f.Sender() })
}

// Done is closed when every flow has finished.
func (r *Runner) Done() <-chan struct{} {
	return flowsDone(r.flows, func(Flow) bool { return true })
}

// SentCounts is what the local senders sent, by stream: datagrams for UDP,
// bytes for TCP.
func (r *Runner) SentCounts() map[int]int64 {
	out := map[int]int64{}
	for _, f := range r.flows {
		if uf, ok := f.(*UDPFlow); ok && f.Sender() {
			out[f.ID()] = uf.snd.Sent()
		} else if f.Sender() {
			out[f.ID()] = f.Bytes()
		}
	}
	return out
}

// SetPeerSent tells UDP receivers how many datagrams their peer sent, so
// that loss at the tail is counted.
func (r *Runner) SetPeerSent(sent map[int]int64) {
	for _, f := range r.flows {
		if uf, ok := f.(*UDPFlow); ok && !f.Sender() {
			if n, ok := sent[f.ID()]; ok {
				uf.peerSent = n
			}
		}
	}
}

// Finish stops the interval clock, reports the last partial interval and
// returns the end's view. Call it once every stream is done.
func (r *Runner) Finish(role string) result.End {
	close(r.stopTick)
	<-r.tickDone
	r.cutMissed()
	for _, f := range r.flows {
		if st, ok := f.(settler); ok {
			st.Settle()
		}
	}
	var tail time.Duration
	for _, f := range r.flows {
		tail = max(tail, f.LastByte())
	}
	// What moved after the last boundary is the tail: a row of its own,
	// marked as such, from the last cut to the last byte, so that the
	// rows add up to the totals.
	switch {
	case r.Iperf3Accounting:
		// iperf3 reports a last partial interval only when it is long
		// enough to mean something; so does its accounting here.
		if tail > r.lastCut && r.tailWorthReporting(tail) {
			r.cut(tail, false)
		}
	case r.movedSinceCut() || len(r.intervals.rows) == 0 && tail > 0:
		r.cut(max(tail, r.lastEnd), true)
	}
	end := result.End{Role: role, Host: LocalHost()}
	if cpu, err := hostmon.ProcessCPU(); err == nil && r.cpuErr == nil {
		u, s, t := hostmon.Usage(r.cpuStart, cpu)
		end.CPU = result.CPU{UserPercent: u, SystemPercent: s, TotalPercent: t}
	}
	if rss, ok := hostmon.PeakRSS(); ok {
		end.CPU.PeakRSSBytes = rss
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
	end.Intervals = r.intervals.rows
	if j := r.intervals.joined(); j > 1 {
		end.RowsJoined = j
	}
	if r.omitSnap == nil && r.Iperf3Accounting { // the test ended inside the omitted start
		r.omitSnap = r.prev
		for _, f := range r.flows {
			f.MarkOmitEnd()
		}
	}
	for _, f := range r.flows {
		local, remote := f.Addrs()
		rs := result.Stream{
			ID:         f.ID(),
			Sender:     f.Sender(),
			LocalAddr:  local,
			RemoteAddr: remote,
			Socket:     r.sockets[f.ID()],
			Start:      max(r.countFrom, r.spec.Omit).Seconds(),
			End:        max(f.LastByte(), r.countFrom, r.spec.Omit).Seconds(),
			Bytes:      f.Bytes() - r.omitSnap[f.ID()],
		}
		if !f.Sender() && !r.Iperf3Accounting {
			r.receiverSpan(f, &rs)
		}
		f.Total(&rs)
		rs.UDPSettlements = r.intervals.settle(rs.UDPSettlements)
		end.Streams = append(end.Streams, rs)
	}
	end.HostCounters = r.host.Finish() // hostcounters.go
	end.UDPArrivals = r.udpArrivals()
	return end
}

// cutMissed cuts the boundaries that passed while the data moved but that
// the interval goroutine had not woken for when Finish stopped it (a
// loaded machine runs the test's end before a late timer): those rows are
// the tick's, not the tail's, or a test of one interval reports its only
// row as a tail. Every stream is done, so the counters have stood still
// since the last byte: the row ends there, or at its boundary if later.
func (r *Runner) cutMissed() {
	var last time.Duration
	for _, f := range r.flows {
		last = max(last, f.LastByte())
	}
	for {
		next := r.nextCut(r.lastCut)
		now := time.Since(r.epoch)
		if next < 0 || next > now || r.ending(next) || !r.movedSinceCut() {
			return
		}
		r.cutRead(next, false, min(max(next, last), now))
	}
}

// receiverSpan starts a receiver's span at its first byte (or at the end
// of the omitted start, if later); it ends at its last. A receiver whose
// peer starts sending a round trip after its own start (-R) would
// otherwise count time in which nothing could arrive, an error that grows
// with the path's RTT. It also notes how long the receiver read after it
// learned that the sender had stopped: the sender's socket buffer and the
// path's queue draining.
func (r *Runner) receiverSpan(f Flow, rs *result.Stream) {
	if fb, ok := f.(interface{ FirstByte() time.Duration }); ok {
		if first := fb.FirstByte(); first > 0 {
			rs.Start = max(first, r.countFrom, r.spec.Omit).Seconds()
			rs.End = max(rs.End, rs.Start)
		}
	}
	if r.drainFrom > 0 {
		rs.Drain = max(f.LastByte()-r.drainFrom, 0).Seconds()
	}
}

// settler is a flow that reads what its kernel counted once it is over,
// before the tail is cut (TCPFlow.Settle).
type settler interface{ Settle() }

// movedSinceCut reports whether any stream moved bytes after the last
// cut, whose tail needs a row even when its last byte came before the
// cut's time (a reader that ran late). A receiver's reads count as
// moving too: its bytes are the kernel's, which can have counted in the
// last row what the reader only took in after that cut, and those reads
// belong to a row, else the rows' calls fall short of the total, which
// Finish reads once the streams are done.
func (r *Runner) movedSinceCut() bool {
	if r.spec.Interval == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.flows {
		if f.Bytes() != r.prev[f.ID()] {
			return true
		}
		if c, ok := f.(callCounter); ok && c.callsSinceCut() {
			return true
		}
	}
	return false
}

// callCounter is a flow that counts its reads or writes per row
// (TCPFlow): the last cut's count against the stream's own.
type callCounter interface{ callsSinceCut() bool }

// FirstError is the first data-plane error of any stream.
func (r *Runner) FirstError() error {
	for _, f := range r.flows {
		if err := f.Err(); err != nil {
			return err
		}
	}
	return nil
}

// tailWorthReporting says, under iperf3's accounting, whether the bytes
// after the last boundary get a row: a row shorter than a tenth of the
// interval has no rate worth printing (a sender's last write lands
// microseconds after the final boundary, and 1 MB over 20 µs reads 400
// Gbit/s), so iperf3 leaves it out of its rows; so does a test too short
// for any full interval.
func (r *Runner) tailWorthReporting(tail time.Duration) bool {
	if r.spec.Interval == 0 {
		return false
	}
	return tail-r.lastCut >= r.spec.Interval/10 || len(r.intervals.rows) == 0
}

// ReceiversIdle is closed when the end's receiving streams together
// have received nothing for timeout (--rcv-timeout); never when the end
// has no receiver or every flow finishes first. It polls the byte
// counts a few times per timeout, which is as exact as the bound needs.
func (r *Runner) ReceiversIdle(timeout time.Duration) <-chan struct{} {
	idle := make(chan struct{})
	if !r.has(false) {
		return idle
	}
	received := func() int64 {
		var n int64
		for _, f := range r.flows {
			if !f.Sender() {
				n += f.Bytes()
			}
		}
		return n
	}
	done := r.Done()
	go func() {
		tick := time.NewTicker(max(timeout/8, time.Millisecond))
		defer tick.Stop()
		last, since := received(), time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if n := received(); n != last {
					last, since = n, now
				} else if now.Sub(since) >= timeout {
					close(idle)
					return
				}
			}
		}
	}()
	return idle
}
