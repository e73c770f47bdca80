package impair

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Verdict is what Arrive did with a packet.
type Verdict uint8

const (
	// Queued: the Direction keeps the packet and will emit it from Release.
	Queued Verdict = iota
	// DroppedLoss: lost by the Bernoulli or Gilbert-Elliott model.
	DroppedLoss
	// DroppedQueue: the rate cap's queue was full.
	DroppedQueue
	// DroppedLimit: the memory limit (SetMemoryLimit) was reached. This is
	// a safety net for configurations without a rate cap, not part of the
	// emulated path; a run that sees it should be treated as invalid.
	DroppedLimit
)

func (v Verdict) String() string {
	switch v {
	case Queued:
		return "queued"
	case DroppedLoss:
		return "dropped-loss"
	case DroppedQueue:
		return "dropped-queue"
	case DroppedLimit:
		return "dropped-limit"
	}
	return "verdict?"
}

// Counters are the exact counts of one Direction. They always satisfy
//
//	In + Duplicated == Out + DroppedLoss + DroppedQueue + DroppedLimit + Discarded + QueuedPackets + QueuedDups
//
// where a queued duplicate is a duplicated packet that has not left yet.
// Tests use Balanced to check this.
type Counters struct {
	In           uint64 `json:"in"`            // packets that arrived
	InBytes      uint64 `json:"in_bytes"`      // their bytes
	Out          uint64 `json:"out"`           // packets that left, duplicates included
	OutBytes     uint64 `json:"out_bytes"`     // their bytes
	DroppedLoss  uint64 `json:"dropped_loss"`  // lost by the loss models
	DroppedQueue uint64 `json:"dropped_queue"` // tail-dropped by the rate cap's queue
	DroppedLimit uint64 `json:"dropped_limit"` // dropped by the memory limit (should stay 0)
	Duplicated   uint64 `json:"duplicated"`    // packets chosen for duplication (each adds one extra Out)
	Reordered    uint64 `json:"reordered"`     // packets that left after a packet that arrived later
	Delayed      uint64 `json:"delayed"`       // packets whose departure was later than their arrival (delay, jitter or rate queueing)
	Held         uint64 `json:"held"`          // packets chosen for a re-ordering hold
	Discarded    uint64 `json:"discarded"`     // packets thrown away by Drain at shutdown
	// ReleasedLate counts packets that left more than LateRelease after
	// their time: the router fell behind (descheduled, or its output line
	// full after a stall), and the path delivered later than configured.
	// MaxLateUs is the worst lateness, in µs.
	ReleasedLate uint64 `json:"released_late"`
	MaxLateUs    uint64 `json:"max_late_us"`
	// OutputLostUs is the time, in µs, the output line stood idle while
	// packets were due, beyond what it could catch up (OutputBurst): the
	// path carried that much less than its rate cap allows.
	OutputLostUs uint64 `json:"output_lost_us"`
	// Gauges at the time of the snapshot.
	QueuedPackets uint64 `json:"queued_packets"` // packets inside (scheduled or held)
	QueuedDups    uint64 `json:"queued_dups"`    // of those, packets that will leave twice
	QueuedBytes   uint64 `json:"queued_bytes"`   // their bytes (each counted once)
}

// Dropped is every packet the Direction dropped on purpose or by its limit.
func (c Counters) Dropped() uint64 { return c.DroppedLoss + c.DroppedQueue + c.DroppedLimit }

// Balanced reports whether the counters account for every packet: nothing
// appeared or vanished without being counted.
func (c Counters) Balanced() bool {
	return c.In+c.Duplicated == c.Out+c.Dropped()+c.Discarded+c.QueuedPackets+c.QueuedDups
}

type atomicCounters struct {
	in, inBytes, out, outBytes                      atomic.Uint64
	dropLoss, dropQueue, dropLimit                  atomic.Uint64
	duplicated, reordered, delayed, held, discarded atomic.Uint64
	queuedPackets, queuedDups, queuedBytes          atomic.Uint64
	releasedLate, maxLateUs, outputLostNs           atomic.Uint64
}

// LateRelease is how late a packet may leave before it counts as
// released late: a few of the writer's wake-ups.
const LateRelease = 1_000_000 // ns

// OutputBurst is the least the output may catch up at once after falling
// behind: one 64 KiB super-packet, the router's largest write; at higher
// rates, OutputCatchUp of the rate. Beyond it the output keeps to the rate
// cap, so that within any window it carries at most the rate plus that
// much, however late the router ran: 2% over a 100 ms window, 0.2% over a
// second. A router that stalls for longer loses the rest of the stall's
// output (OutputLostUs), and says so.
const (
	OutputBurst   = 64 << 10 // bytes
	OutputCatchUp = 2 * time.Millisecond
)

// Direction is the emulator for one direction of a path. It is not safe for
// concurrent use: the caller serialises Arrive and Release (the router holds
// a mutex). Counters may be read concurrently at any time.
//
// Time is an int64 count of nanoseconds on any monotonic clock; it must
// never go backwards between calls.
type Direction[P any] struct {
	cfg    Config
	rng    *rand.Rand
	geBad  bool
	busy   float64 // time (ns) at which the rate cap's serialiser is free
	wireNs float64 // ns per byte at the rate cap
	// outFree is when the output line is free (ns): packets leave no
	// faster than the rate cap even when the router ran late and many
	// fell due at once. burstNs is OutputBurst's time at the rate.
	outFree float64
	burstNs float64
	qlimit  float64
	last    int64  // latest release time handed out (KeepOrder)
	seq     uint64 // next arrival number
	q       releaseQueue[P]
	held    []held[P] // FIFO of re-ordering holds; held[hhead:] are live
	hhead   int
	outSeen uint64 // 1 + highest arrival number that has left; 0 if none
	outN    uint64 // entries emitted (a duplicated packet counts once)
	bytes   int64  // bytes inside
	maxB    int64  // memory limit, 0 = none
	gap     uint64
	hold    int64
	c       atomicCounters
}

type held[P any] struct {
	e        entry[P]
	target   uint64 // leave once outN reaches this
	deadline int64  // or at this time
}

// NewDirection returns a Direction for cfg whose random decisions come from
// a PCG generator started at (start, stream). The same configuration, start,
// stream and sequence of (time, size) arrivals always give the same
// decisions. Use a different stream for each direction of a path.
func NewDirection[P any](cfg Config, start, stream uint64) (*Direction[P], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Direction[P]{
		cfg:  cfg,
		rng:  rand.New(rand.NewPCG(start, stream)),
		gap:  uint64(cfg.reorderGap()),
		hold: int64(cfg.reorderHold()),
		last: math.MinInt64,
	}
	d.q.heap = cfg.Jitter > 0 && !cfg.KeepOrder
	if cfg.Rate > 0 {
		d.wireNs = 8e9 / cfg.Rate
		d.qlimit = float64(cfg.queueLimit())
		d.burstNs = max(OutputBurst*d.wireNs, float64(OutputCatchUp))
		d.outFree = math.Inf(-1)
	}
	return d, nil
}

// Config returns the configuration the Direction was built with.
func (d *Direction[P]) Config() Config { return d.cfg }

// SetMemoryLimit caps the bytes the Direction holds; packets beyond it are
// dropped and counted in DroppedLimit. Zero removes the cap.
func (d *Direction[P]) SetMemoryLimit(bytes int64) { d.maxB = bytes }

// Counters returns a snapshot of the counters. It is safe to call
// concurrently with Arrive and Release; the fields are read one by one, so
// a snapshot taken while packets move may be off by the packets in motion.
func (d *Direction[P]) Counters() Counters {
	c := &d.c
	return Counters{
		In: c.in.Load(), InBytes: c.inBytes.Load(), Out: c.out.Load(), OutBytes: c.outBytes.Load(),
		DroppedLoss: c.dropLoss.Load(), DroppedQueue: c.dropQueue.Load(), DroppedLimit: c.dropLimit.Load(),
		ReleasedLate: c.releasedLate.Load(), MaxLateUs: c.maxLateUs.Load(), OutputLostUs: c.outputLostNs.Load() / 1000,
		Duplicated: c.duplicated.Load(), Reordered: c.reordered.Load(), Delayed: c.delayed.Load(),
		Held: c.held.Load(), Discarded: c.discarded.Load(), QueuedPackets: c.queuedPackets.Load(), QueuedDups: c.queuedDups.Load(),
		QueuedBytes: c.queuedBytes.Load(),
	}
}

// Len is the number of packets inside (scheduled or held).
func (d *Direction[P]) Len() int { return d.q.len() + len(d.held) - d.hhead }

func (d *Direction[P]) lose() bool {
	lost := false
	if d.cfg.Loss > 0 && d.rng.Float64() < d.cfg.Loss {
		lost = true
	}
	if g := d.cfg.GE; g != nil {
		if d.geBad {
			if g.R > 0 && d.rng.Float64() < g.R {
				d.geBad = false
			}
		} else if g.P > 0 && d.rng.Float64() < g.P {
			d.geBad = true
		}
		p := g.LossGood
		if d.geBad {
			p = g.LossBad
		}
		if p >= 1 || (p > 0 && d.rng.Float64() < p) {
			lost = true
		}
	}
	return lost
}

// Arrive offers a packet of size bytes that arrived at time now. If the
// verdict is Queued the Direction keeps pkt until Release emits it;
// otherwise the packet was dropped and the caller still owns pkt.
func (d *Direction[P]) Arrive(now int64, pkt P, size int) Verdict {
	c := &d.c
	c.in.Add(1)
	c.inBytes.Add(uint64(size))
	seq := d.seq
	d.seq++
	if d.lose() {
		c.dropLoss.Add(1)
		return DroppedLoss
	}
	depart := float64(now)
	var newBusy float64
	if d.wireNs > 0 {
		start := d.busy
		if start < depart {
			start = depart
		}
		backlog := (start - depart) / d.wireNs // bytes still waiting
		wire := float64(size + d.cfg.Overhead)
		if backlog+wire > d.qlimit {
			c.dropQueue.Add(1)
			return DroppedQueue
		}
		newBusy = start + wire*d.wireNs
		depart = newBusy
	}
	if d.maxB > 0 && d.bytes+int64(size) > d.maxB {
		c.dropLimit.Add(1)
		return DroppedLimit
	}
	if d.wireNs > 0 {
		d.busy = newBusy
	}
	e := entry[P]{seq: seq, size: size, pkt: pkt}
	if d.cfg.Duplicate > 0 && d.rng.Float64() < d.cfg.Duplicate {
		e.dup = true
		c.duplicated.Add(1)
		c.queuedDups.Add(1)
	}
	if d.cfg.Reorder > 0 && d.rng.Float64() < d.cfg.Reorder {
		e.reorder = true
	}
	delay := float64(d.cfg.Delay)
	if j := float64(d.cfg.Jitter); j > 0 {
		switch d.cfg.Distribution {
		case Normal:
			delay += d.rng.NormFloat64() * j
		default:
			delay += (2*d.rng.Float64() - 1) * j
		}
		if delay < 0 {
			delay = 0
		}
	}
	at := int64(math.Ceil(depart + delay))
	if at < now {
		at = now
	}
	if d.cfg.KeepOrder && at < d.last {
		at = d.last
	}
	if at > d.last {
		d.last = at
	}
	if at > now {
		c.delayed.Add(1)
	}
	e.at = at
	d.q.push(e)
	d.bytes += int64(size)
	c.queuedPackets.Add(1)
	c.queuedBytes.Add(uint64(size))
	return Queued
}

// NextDue returns the earliest time at which Release has something to do,
// and false when the Direction is empty.
func (d *Direction[P]) NextDue() (int64, bool) {
	t, ok := int64(math.MaxInt64), false
	if h := d.q.peek(); h != nil {
		t, ok = d.outDue(*h, h.at), true
	}
	if d.hhead < len(d.held) {
		if dl := d.outDue(d.held[d.hhead].e, d.held[d.hhead].deadline); dl < t {
			t = dl
		}
		ok = true
	}
	return t, ok
}

// outWire is e's time on the output line at the rate cap, ns.
func (d *Direction[P]) outWire(e entry[P]) float64 {
	copies := 1
	if e.dup {
		copies = 2
	}
	return float64(copies*(e.size+d.cfg.Overhead)) * d.wireNs
}

// outDue is when e may leave: at its time `at`, but no sooner than the
// output line has carried it after the packet before it. On time the two
// agree (the rate cap spaced the departures already); after the router
// fell behind, the backlog leaves at the rate, not in one burst.
func (d *Direction[P]) outDue(e entry[P], at int64) int64 {
	if d.wireNs == 0 || math.IsInf(d.outFree, -1) {
		return at
	}
	return max(at, int64(math.Ceil(d.outFree+d.outWire(e))))
}

// noteOut books e's departure at now, which was due at `at`: the output
// line is busy until its finish, which lags now by at most burstNs (the
// catch-up allowed after a stall); a departure more than LateRelease
// after its time is counted.
func (d *Direction[P]) noteOut(e entry[P], at, now int64) {
	if late := now - at; late > LateRelease {
		d.c.releasedLate.Add(1)
		if us := uint64(late / 1000); us > d.c.maxLateUs.Load() {
			d.c.maxLateUs.Store(us)
		}
	}
	if d.wireNs == 0 {
		return
	}
	finish := max(d.outFree+d.outWire(e), float64(e.at))
	if floor := float64(now) - d.burstNs; floor > finish {
		d.c.outputLostNs.Add(uint64(floor - finish))
		finish = floor
	}
	d.outFree = finish
}

// Release emits, in order, every packet due at or before now. emit is
// called once per packet with copies = 1, or 2 for a duplicated packet
// (the caller sends it twice, back to back). After emit returns the
// Direction no longer references the packet. Release returns the number of
// emit calls.
func (d *Direction[P]) Release(now int64, emit func(pkt P, copies int)) int {
	n := 0
	for {
		// A hold that timed out leaves before a queued packet due at the same time.
		if d.hhead < len(d.held) && d.held[d.hhead].deadline <= now {
			h := d.q.peek()
			if h == nil || d.held[d.hhead].deadline <= h.at {
				hd := d.held[d.hhead]
				if d.outDue(hd.e, hd.deadline) > now {
					return n // the output line is busy: it leaves at the rate
				}
				e := d.popHeld()
				n += d.emitOne(e, hd.deadline, now, emit)
				continue
			}
		}
		h := d.q.peek()
		if h == nil || h.at > now {
			return n
		}
		if !h.reorder && d.outDue(*h, h.at) > now {
			return n // the output line is busy: it leaves at the rate
		}
		e := d.q.pop()
		if e.reorder {
			e.reorder = false
			d.c.held.Add(1)
			d.held = append(d.held, held[P]{e: e, target: d.outN + d.gap, deadline: e.at + d.hold})
			continue
		}
		n += d.emitOne(e, e.at, now, emit)
	}
}

func (d *Direction[P]) popHeld() entry[P] {
	var zero held[P]
	e := d.held[d.hhead].e
	d.held[d.hhead] = zero
	d.hhead++
	if d.hhead == len(d.held) {
		d.held, d.hhead = d.held[:0], 0
	} else if d.hhead > 1024 && d.hhead*2 > len(d.held) {
		n := copy(d.held, d.held[d.hhead:])
		clear(d.held[n:])
		d.held, d.hhead = d.held[:n], 0
	}
	return e
}

// emitOne sends e, due at `at`, and then every hold whose overtaking
// count it completes.
func (d *Direction[P]) emitOne(e entry[P], at, now int64, emit func(P, int)) int {
	n := 0
	for {
		d.noteOut(e, at, now)
		c := &d.c
		copies := 1
		if e.dup {
			copies = 2
			c.queuedDups.Add(^uint64(0))
		}
		if e.seq < d.outSeen {
			c.reordered.Add(1)
		} else {
			d.outSeen = e.seq + 1
		}
		c.out.Add(uint64(copies))
		c.outBytes.Add(uint64(copies * e.size))
		c.queuedPackets.Add(^uint64(0))
		c.queuedBytes.Add(^uint64(e.size - 1))
		d.bytes -= int64(e.size)
		d.outN++
		emit(e.pkt, copies)
		n++
		if d.hhead < len(d.held) && d.held[d.hhead].target <= d.outN {
			e = d.popHeld()
			at = now // held on purpose, not late by the router's fault
			continue
		}
		return n
	}
}

// Drain removes every packet still inside without emitting it and hands it
// to free (for returning buffers at shutdown). Each is counted in
// Discarded (a duplicated one twice, as both its copies are lost).
func (d *Direction[P]) Drain(free func(P)) {
	c := &d.c
	discard := func(e entry[P]) {
		c.discarded.Add(1)
		if e.dup {
			c.discarded.Add(1)
		}
		if free != nil {
			free(e.pkt)
		}
	}
	for d.q.len() > 0 {
		discard(d.q.pop())
	}
	for d.hhead < len(d.held) {
		discard(d.popHeld())
	}
	d.bytes = 0
	c.queuedPackets.Store(0)
	c.queuedDups.Store(0)
	c.queuedBytes.Store(0)
}
