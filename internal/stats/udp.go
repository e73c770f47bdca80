package stats

import (
	"math"
	"math/bits"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// MaxSeq is the highest sequence number the receiver accounts for. A
// sender counts from 0 and never gets near it; a larger number is a
// corrupt or hostile header, and is only counted by Invalid. The bound also
// keeps every count within int64.
const MaxSeq = 1<<62 - 1

// MaxJump is the furthest a number may lie beyond the highest so far: 2^26
// numbers is 2 s of a sender at 33 Mpps, all lost. A number further on is
// not a sender's (one datagram numbered 10^12 would otherwise count 10^12
// lost) and is only counted by Invalid.
const MaxJump = 1 << 26

const defaultLateThreshold = 2 * time.Second

// Memory bounds. Each structure starts small (or, for the window, at
// minWindow) and doubles only when a stream needs it.
type limits struct {
	minWindow uint64 // duplicate-detection window, numbers (power of two)
	maxWindow uint64
	maxGaps   int // pending missing ranges
	maxRuns   int // record runs for the re-ordering extent
}

var defaultLimits = limits{
	minWindow: 1 << 20, // 128 KiB
	maxWindow: 1 << 27, // 16 MiB: 67 M datagrams, 2 s of 33 Mpps
	maxGaps:   1 << 20, // 32 MiB
	maxRuns:   1 << 20, // 24 MiB
}

// UDPConfig configures a UDPReceiver.
type UDPConfig struct {
	// LateThreshold: a missing datagram counts as lost once this long has
	// passed since it was detected missing (a higher number arrived);
	// docs/metrics.md, "Loss". 0 means 2 s.
	LateThreshold time.Duration
	// TimestampSource is "kernel" or "user-space", copied into results.
	TimestampSource string
}

// Arrival is one datagram as received.
type Arrival struct {
	Seq    uint64
	SentNs int64 // sender's wall clock at send, ns since the Unix epoch (from the datagram header)
	RecvNs int64 // receiver's clock at arrival, ns since the Unix epoch (kernel SO_TIMESTAMPNS or time.Now)
	// SharedRecvTime is true when RecvNs is not this datagram's own arrival
	// time but shared with the previous datagram (segments of one GRO batch
	// carry one timestamp).
	SharedRecvTime bool
}

// counts are the arrival figures of an interval or of the stream.
type counts struct {
	received, lost, late, dups, reordered, maxExtent int64
}

// UDPReceiver does a receiver's per-datagram accounting for one UDP stream
// (docs/metrics.md, "UDP stream metrics"). Every Add is exactly one of
// received, late, duplicate or invalid.
//
// How an arrival with number s is classified:
//   - s above every number so far: received. Numbers skipped in between
//     form a gap, detected now; if they haven't arrived LateThreshold later
//     (judged at each arrival's RecvNs and at Cut), they are lost.
//   - s in a pending gap: re-ordered (RFC 4737) and received.
//   - s already arrived: duplicate; each further copy counts once.
//   - s missing but its gap's deadline passed: late (it was counted lost,
//     and stays lost).
//
// Duplicates are told apart by a bitmap of the most recent numbers, at
// least 2^20 of them and always every pending gap (it grows to 2^27). An
// arrival below the window is counted as a duplicate: it is either one, or
// a datagram already counted lost 2^20 numbers ago; received and lost are
// exact either way. Under extreme loss patterns memory is bounded by
// counting the oldest pending gap lost before its deadline (more than 2^20
// pending gaps, or pending gaps spanning more than 2^27 numbers), and by
// forgetting the oldest re-ordering records (more than 2^20 runs; an
// extent reaching behind them is then a lower bound).
//
// Arrival indices for the extent count received datagrams only: RFC 4737
// considers the first copy of a duplicate, and a late datagram is lost.
type UDPReceiver struct {
	cfg    UDPConfig
	lateNs int64
	lim    limits

	clock     int64 // latest receiver time seen (arrivals and cuts), so deadlines never go backwards
	haveClock bool
	started   bool
	top       uint64 // highest number received
	arrivals  int64  // received datagrams: the next one's arrival index

	seen seenWindow
	gaps gapList
	ext  extentTracker
	tm   timing
	off  clockOffset

	iv, tot counts
	invalid int64

	// Loss by interval row: row is the open row (the number of Cuts so
	// far); rowLost[k] is what row k's gaps still miss (their numbers were
	// due in row k), and cutLost[k] what row k reported at its cut. They
	// differ when a re-ordered datagram fills a gap after the cut, or at
	// Final: Settlements carry the difference.
	row     int
	rowLost []int64
	cutLost []int64
	settled []result.UDPSettlement // once Final has run

	done  bool
	final result.UDP
}

// NewUDPReceiver returns a receiver for one stream.
func NewUDPReceiver(cfg UDPConfig) *UDPReceiver { return newUDPReceiver(cfg, defaultLimits) }

func newUDPReceiver(cfg UDPConfig, lim limits) *UDPReceiver {
	late := cfg.LateThreshold
	if late <= 0 {
		late = defaultLateThreshold
	}
	return &UDPReceiver{
		cfg:     cfg,
		lateNs:  int64(late),
		lim:     lim,
		seen:    newSeenWindow(lim.minWindow),
		ext:     extentTracker{maxRuns: lim.maxRuns},
		tm:      newTiming(),
		rowLost: []int64{0},
	}
}

// SetClockOffset gives the receiver's clock minus the sender's, with its
// error bound (from EstimateOffset), so results carry absolute one-way
// delay. It applies to every datagram of the spans reported afterwards.
func (r *UDPReceiver) SetClockOffset(offsetNs, errorBoundNs int64) {
	r.off = clockOffset{set: true, offset: offsetNs, errorNs: errorBoundNs}
}

// Invalid is how many arrivals had a number no sender could have sent:
// above MaxSeq, more than MaxJump beyond the highest so far, or (known at
// Final) at or above the sender's count.
func (r *UDPReceiver) Invalid() int64 { return r.invalid }

// Add accounts for one arrival. It is O(1) amortised (O(log n) in the
// pending gaps for a re-ordered one) and does not allocate once the
// stream's structures have reached their working size. It reports
// whether the arrival was received: new, in time and valid, not a
// duplicate, late or invalid.
func (r *UDPReceiver) Add(a Arrival) bool {
	if r.done {
		return false
	}
	if a.Seq > MaxSeq || a.Seq > r.next()+MaxJump {
		r.invalid++
		return false
	}
	r.advanceClock(a.RecvNs)
	// Deadlines that passed by this arrival's time make it late.
	r.expire()
	s := a.Seq
	switch {
	case !r.started || s > r.top:
		r.newTop(s)
		r.ext.record(r.arrivals, s)
		r.receive(a)
		return true
	case !r.seen.covers(s) || r.seen.get(s):
		r.iv.dups++
		r.tot.dups++
		return false
	default:
		r.seen.set(s)
		g := r.gaps.find(s)
		if g == nil {
			r.iv.late++
			r.tot.late++
			return false
		}
		g.filled++
		r.rowLost[g.row]--
		e := r.ext.extent(r.arrivals, s)
		r.iv.reordered++
		r.tot.reordered++
		r.iv.maxExtent = max(r.iv.maxExtent, e)
		r.tot.maxExtent = max(r.tot.maxExtent, e)
		r.receive(a)
		r.gaps.dropFilled()
		r.trim()
		return true
	}
}

func (r *UDPReceiver) receive(a Arrival) {
	r.arrivals++
	r.iv.received++
	r.tot.received++
	r.tm.add(a.SentNs, a.RecvNs, a.SharedRecvTime)
}

// next is the number expected next.
func (r *UDPReceiver) next() uint64 {
	if r.started {
		return r.top + 1
	}
	return 0
}

// newTop takes s above every number so far: the numbers skipped become a
// pending gap, and the window moves up to s.
func (r *UDPReceiver) newTop(s uint64) {
	if next := r.next(); s > next {
		if r.gaps.len() >= r.lim.maxGaps {
			r.loss(r.gaps.expireFront())
		}
		r.gaps.add(next, s, satAdd(r.clock, r.lateNs), r.row)
		r.rowLost[r.row] += int64(s - next)
	}
	// The window must cover every pending gap before it moves, or it would
	// overwrite what it knows of them. Twice that lets a datagram
	// that arrives after its gap expired still be told late, not duplicate.
	if lo, ok := r.gaps.lowest(); ok {
		for s-lo >= r.lim.maxWindow {
			r.loss(r.gaps.expireFront())
			if lo, ok = r.gaps.lowest(); !ok {
				break
			}
		}
		if ok && s-lo >= r.seen.size {
			r.seen.grow(min(ceilPow2(2*(s-lo+1)), r.lim.maxWindow))
		}
	}
	r.seen.advance(s)
	r.seen.set(s)
	r.top, r.started = s, true
	r.trim()
}

func (r *UDPReceiver) advanceClock(t int64) {
	if !r.haveClock || t > r.clock {
		r.clock, r.haveClock = t, true
	}
}

func (r *UDPReceiver) expire() {
	if lost := r.gaps.expire(r.clock); lost > 0 {
		r.loss(lost)
		r.trim()
	}
}

// loss counts n numbers of expired gaps lost. Their rows counted them
// when the gaps were found.
func (r *UDPReceiver) loss(n uint64) {
	r.tot.lost += int64(n)
}

// trim drops re-ordering records no pending gap can need.
func (r *UDPReceiver) trim() {
	lowest, ok := r.gaps.lowest()
	if !ok {
		lowest = r.top + 1
	}
	r.ext.trim(lowest)
}

// Cut closes an interval row at receiver time nowNs and returns its
// figures: datagrams received, late and duplicated in it, the datagrams
// due in it that are missing (a later number arrived in it, and they have
// not), and the delay variation of its datagrams (jitter is the running
// RFC 3550 estimate at the cut; n/a if no pair fell in the interval).
// Its loss is Provisional while the late threshold has not passed for all
// of it: a re-ordered datagram may still arrive, and Final's Settlements
// then correct the row.
func (r *UDPReceiver) Cut(nowNs int64) result.UDP {
	if r.done {
		return result.UDP{TimestampSource: r.cfg.TimestampSource}
	}
	r.advanceClock(nowNs)
	r.expire()
	c := r.iv
	c.lost = r.rowLost[r.row]
	u := r.report(c, &r.tm.iv)
	u.Provisional = r.gaps.pendingIn(r.row)
	r.cutLost = append(r.cutLost, c.lost)
	r.row++
	r.rowLost = append(r.rowLost, 0)
	r.iv = counts{}
	r.tm.cut()
	return u
}

// Final closes the stream at receiver time nowNs and returns its totals.
// sentTotal is the sender's count of datagrams (numbers 0..sentTotal-1), or
// -1 if unknown. The test is over, so every number below sentTotal that
// has not arrived is lost now, whether its deadline has passed or not, and
// including the tail above the highest number received. Without sentTotal,
// the tail can't be known and is not counted.
//
// With sentTotal, everything is clamped to it: a number at or above it
// was never sent, so its arrival is invalid, and what was counted lost
// beyond it is not.
//
// The totals are the sum of the rows Cut returned, once the Settlements
// are added to them. What arrived after the last Cut
// belongs to the last row. After Final, Add is ignored and Final returns
// the same.
func (r *UDPReceiver) Final(nowNs int64, sentTotal int64) result.UDP {
	if r.done {
		return r.final
	}
	r.advanceClock(nowNs)
	limit := uint64(math.MaxUint64)
	if sentTotal >= 0 {
		limit = uint64(sentTotal)
	}
	lost := r.gaps.drain(limit, &r.seen, func(row int, missing, lost uint64) {
		r.rowLost[row] += int64(lost) - int64(missing)
	})
	if next := r.next(); sentTotal >= 0 && limit > next {
		lost += limit - next
		r.rowLost[r.row] += int64(limit - next)
	}
	r.tot.lost += int64(lost)
	bogus := r.clamp(sentTotal)
	r.tm.cut()
	r.final = r.report(r.tot, &r.tm.tot)
	r.settled = r.settlements(bogus)
	r.final.Invalid = r.invalid
	r.done = true
	return r.final
}

// Settlements are what each row Cut returned gains once the stream is
// over (result.UDPSettlement); nil before Final.
func (r *UDPReceiver) Settlements() []result.UDPSettlement { return r.settled }

// clamp holds the totals to the sender's count n (nothing to do for -1):
// numbers at or above n that arrived are invalid, not received, and of
// n numbers sent, those not received are lost, no more. It returns how
// many arrivals it found invalid.
func (r *UDPReceiver) clamp(n int64) int64 {
	if n < 0 || !r.started {
		return 0
	}
	var bogus int64
	if r.top >= uint64(n) {
		lo := max(uint64(n), r.seen.lo())
		bogus = int64(r.seen.count(lo, r.top+1))
		bogus = min(bogus, r.tot.received)
		r.tot.received -= bogus
		r.invalid += bogus
	}
	if most := max(n-r.tot.received, 0); r.tot.lost > most {
		// Losses counted beyond n: take them off the latest rows.
		excess := r.tot.lost - most
		r.tot.lost = most
		for k := len(r.rowLost) - 1; k >= 0 && excess > 0; k-- {
			d := min(excess, max(r.rowLost[k], 0))
			r.rowLost[k] -= d
			excess -= d
		}
	}
	return bogus
}

// settlements are what each row Cut returned gains now that the stream
// is over: losses settled after the cut, and for the last row what
// arrived after it (less the arrivals found invalid).
func (r *UDPReceiver) settlements(bogus int64) []result.UDPSettlement {
	if r.row == 0 { // no rows
		return nil
	}
	last := r.row - 1
	var out []result.UDPSettlement
	for k := 0; k < r.row; k++ {
		s := result.UDPSettlement{Index: k, Lost: r.rowLost[k] - r.cutLost[k]}
		if k == last {
			s.Lost += r.rowLost[r.row]
			s.Received = r.iv.received - bogus
			s.Late, s.Duplicates, s.Reordered = r.iv.late, r.iv.dups, r.iv.reordered
		}
		if s != (result.UDPSettlement{Index: k}) {
			out = append(out, s)
		}
	}
	return out
}

func (r *UDPReceiver) report(c counts, ts *timingSpan) result.UDP {
	u := result.UDP{
		Received:         c.received,
		Lost:             c.lost,
		Late:             c.late,
		Duplicates:       c.dups,
		Reordered:        c.reordered,
		ReorderMaxExtent: c.maxExtent,
		Expected:         c.received + c.lost,
		TimestampSource:  r.cfg.TimestampSource,
	}
	r.tm.fill(&u, ts, r.cfg.TimestampSource, r.off)
	return u
}

// satAdd is a + b for b >= 0, stopping at MaxInt64: a deadline must not
// wrap into the past.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// ceilPow2 is the smallest power of two >= v (v >= 1, v <= 2^63).
func ceilPow2(v uint64) uint64 { return 1 << bits.Len64(v-1) }
