package tcpflow

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/stats"
)

// --trip-times (iperf2 2.1's write-to-read latency): the sender stamps
// the start of each block (each write of -l bytes) with a header; the
// receiver, whose reads do not align with the writes, finds each header
// by its offset in the byte stream (blocks are -l bytes) and takes the
// block's latency as the time its last byte was read less its stamp.
//
// The header: magic (4 bytes), the block's sequence number (4, wrapping),
// the send time in Unix ns (8), big-endian. spec refuses a shorter -l.
const TripHeaderLen = spec.MinTripTimesLength

// tripMagic marks a stamped block; a block without it (a peer that did
// not stamp, or a stream out of step) is counted as bad, not measured.
var tripMagic = [4]byte{'w', 'p', 't', 't'}

// stampBlock writes block seq's header, sent at now, at the start of buf.
// A block shorter than the header (the last one of -n) gets the header's
// start, which the receiver counts as a partial block and does not time.
func stampBlock(buf []byte, seq uint32, now time.Time) {
	var h [TripHeaderLen]byte
	copy(h[:4], tripMagic[:])
	binary.BigEndian.PutUint32(h[4:8], seq)
	binary.BigEndian.PutUint64(h[8:16], uint64(now.UnixNano()))
	copy(buf, h[:])
}

// Histogram geometry of the latencies, in ns: 1 ns to 100 s at two
// significant digits; longer ones count as 100 s (min and max are exact).
const (
	tripHistMax    = 100e9
	tripHistDigits = 2
)

// tripAcc accumulates block latencies: Welford's running mean and
// variance, the exact extremes, and a histogram of the non-negative ones
// (an HDR histogram takes no negative value; negatives mean the clocks
// disagree, and are counted apart).
type tripAcc struct {
	n, negative, bad int64
	mean, m2         float64
	min, max         int64
	hist             *hdrhistogram.Histogram
}

// TripReaderBytes is what one receiving stream's timing holds beyond its
// buffers (its interval's and its total's histograms), which a server
// charges to a --trip-times test at its admission.
var TripReaderBytes = 2 * int64(hdrhistogram.New(1, tripHistMax, tripHistDigits).ByteSize())

func newTripAcc() tripAcc {
	return tripAcc{hist: hdrhistogram.New(1, tripHistMax, tripHistDigits)}
}

func (a *tripAcc) record(ns int64) {
	if a.n == 0 || ns < a.min {
		a.min = ns
	}
	if a.n == 0 || ns > a.max {
		a.max = ns
	}
	a.n++
	d := float64(ns) - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (float64(ns) - a.mean)
	if ns < 0 {
		a.negative++
		return
	}
	// In range, so it cannot fail (and an error would allocate).
	_ = a.hist.RecordValue(min(max(ns, 1), tripHistMax))
}

func (a *tripAcc) reset() {
	h := a.hist
	h.Reset()
	*a = tripAcc{hist: h}
}

// figures is the accumulated latencies as a report carries them.
func (a *tripAcc) figures() *result.TripTimes {
	t := &result.TripTimes{Count: a.n, Negative: a.negative, BadBlocks: a.bad}
	if a.n == 0 {
		return t
	}
	t.MeanUs = a.mean / 1e3
	t.MinUs = float64(a.min) / 1e3
	t.MaxUs = float64(a.max) / 1e3
	if a.n > 1 {
		t.StdevUs = math.Sqrt(max(a.m2, 0)/float64(a.n-1)) / 1e3
	}
	if a.hist.TotalCount() > 0 {
		p := stats.Summarize(a.hist, 1)
		t.Histogram = &p
	}
	return t
}

// TripReader times a receiver's blocks from the bytes it reads. It holds
// no more than one header whatever the peer sends, and never allocates
// after it is made.
type TripReader struct {
	blockLen int
	off      int // into the current block
	hdr      [TripHeaderLen]byte
	next     uint32 // the sequence number the next block should carry
	started  bool

	mu           sync.Mutex
	iv, total    tripAcc
	lastReadTime time.Time
}

// NewTripReader reads blocks of blockLen bytes (at least TripHeaderLen).
func NewTripReader(blockLen int) *TripReader {
	if blockLen < TripHeaderLen {
		panic("tcpflow: trip-times block shorter than its header")
	}
	return &TripReader{blockLen: blockLen, iv: newTripAcc(), total: newTripAcc()}
}

// Feed takes the bytes of one read, which returned at at.
func (t *TripReader) Feed(p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastReadTime = at
	for len(p) > 0 {
		take := min(len(p), t.blockLen-t.off)
		if t.off < TripHeaderLen {
			copy(t.hdr[t.off:], p[:min(take, TripHeaderLen-t.off)])
		}
		t.off += take
		p = p[take:]
		if t.off == t.blockLen {
			t.block(at)
			t.off = 0
		}
	}
}

// Finish times the last block, cut short by -n or the sender's stop, if
// its header arrived whole: its last byte is the last one read.
func (t *TripReader) Finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.off >= TripHeaderLen {
		t.block(t.lastReadTime)
	}
	t.off = 0
}

// block ends a block whose last byte was read at at.
func (t *TripReader) block(at time.Time) {
	seq := binary.BigEndian.Uint32(t.hdr[4:8])
	if [4]byte(t.hdr[:4]) != tripMagic || (t.started && seq != t.next) {
		t.iv.bad++
		t.total.bad++
		return
	}
	t.started, t.next = true, seq+1
	ns := at.UnixNano() - int64(binary.BigEndian.Uint64(t.hdr[8:16]))
	t.iv.record(ns)
	t.total.record(ns)
}

// Interval returns the figures since the last call and starts anew.
func (t *TripReader) Interval() *result.TripTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.iv.figures()
	t.iv.reset()
	return f
}

// Total returns the figures over the whole stream.
func (t *TripReader) Total() *result.TripTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total.figures()
}

// ResetTotal drops what the total holds (the omitted start's blocks).
func (t *TripReader) ResetTotal() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total.reset()
}
