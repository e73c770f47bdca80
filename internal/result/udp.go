package result

// UDP is one UDP stream's figures over an interval or a whole test, from
// one end's view. The receiver fills the arrival figures, the sender the
// send figures. Definitions are in docs/metrics.md ("UDP stream metrics").
type UDP struct {
	// Sender.
	Sent       int64    `json:"sent,omitempty"`        // datagrams handed to the kernel
	SendErrors int64    `json:"send_errors,omitempty"` // ENOBUFS and other failed sends
	Spacing    *Spacing `json:"spacing,omitempty"`     // achieved send spacing against the schedule
	// Schedule says whether a paced sender held its rate, and if not why.
	Schedule *Schedule `json:"schedule,omitempty"`
	// GSOSegments is the most datagrams one send carried as GSO segments
	// (0 or 1: no GSO). A receiving host that drops such a batch counts
	// one RcvbufError for all of them.
	GSOSegments int `json:"gso_segments,omitempty"`

	// Receiver.
	Received         int64 `json:"received"`           // distinct datagrams, not late, not duplicates
	Lost             int64 `json:"lost"`               // not arrived within the late threshold
	Late             int64 `json:"late"`               // arrived after being counted lost
	Duplicates       int64 `json:"duplicates"`         // a sequence number seen again
	Reordered        int64 `json:"reordered"`          // RFC 4737: seq below the next expected
	ReorderMaxExtent int64 `json:"reorder_max_extent"` // RFC 4737 extent, the largest seen
	// Expected is received + lost: the datagrams the receiver knows were sent.
	Expected int64 `json:"expected"`
	// Invalid counts datagrams that were not the sender's: a wrong token
	// or stream, or a sequence number no sender could have sent (beyond
	// what the sender says it sent). They are in no other count.
	Invalid int64 `json:"invalid,omitempty"`
	// Forged is the part of Invalid that carried this test's token but no
	// valid MAC, with authentication on: injected by someone without the
	// key.
	Forged int64 `json:"forged,omitempty"`

	// Provisional marks an interval's loss as not final when the row was
	// cut: a datagram due in it may still arrive within the late
	// threshold. The stream's UDPSettlements correct such rows.
	Provisional bool `json:"provisional,omitempty"`

	// JitterMs is RFC 3550's smoothed interarrival jitter, in ms.
	JitterMs float64 `json:"jitter_ms"`
	// JitterMethod says how jitter was computed: "kernel timestamps",
	// "user-space clock", or with GRO "kernel timestamps per GRO batch".
	JitterMethod string `json:"jitter_method,omitempty"`
	// JitterSamples is how many datagram pairs the jitter is made of; with
	// GRO only pairs with distinct receive times count.
	JitterSamples int64 `json:"jitter_samples"`

	IPDV *Percentiles `json:"ipdv_us,omitempty"` // RFC 5481 IPDV, µs
	PDV  *Percentiles `json:"pdv_us,omitempty"`  // RFC 5481 PDV: delay − min delay, µs
	// OWD is one-way delay: relative (= PDV) unless clocks were compared.
	OWD *OWD `json:"owd,omitempty"`

	// TimestampSource is "kernel" (SO_TIMESTAMPNS) or "user-space".
	TimestampSource string `json:"timestamp_source,omitempty"`
	GROBatches      int64  `json:"gro_batches,omitempty"` // receive calls that returned several segments
	// SocketDrops is what the kernel dropped at this stream's own receive
	// socket (sk_drops, from SO_MEMINFO or SO_RXQ_OVFL): unlike
	// RcvbufErrors, no other socket's. Nil where not counted. Linux counts
	// one per skb: where the socket took GRO batches (SocketDropsGRO) a
	// drop may be a whole batch, so the count is a lower bound in
	// datagrams; without GRO it is exact.
	SocketDrops    *uint64 `json:"socket_drops,omitempty"`
	SocketDropsGRO bool    `json:"socket_drops_gro,omitempty"`

	// Frames is an isochronous stream's frames (--isochronous); nil for
	// any other.
	Frames *Frames `json:"frames,omitempty"`
}

// LostPercent is lost ÷ expected, in percent.
func (u UDP) LostPercent() float64 {
	if u.Expected == 0 {
		return 0
	}
	return 100 * float64(u.Lost) / float64(u.Expected)
}

// UDPSettlement is what one interval row of a UDP receiver gains after
// its cut: a loss is the row's whose datagram was due in it, and is known
// only once the late threshold has passed; what arrived after the last
// row belongs to it.
type UDPSettlement struct {
	Index      int   `json:"index"`
	Received   int64 `json:"received,omitempty"`
	Lost       int64 `json:"lost,omitempty"`
	Late       int64 `json:"late,omitempty"`
	Duplicates int64 `json:"duplicates,omitempty"`
	Reordered  int64 `json:"reordered,omitempty"`
}

// Percentiles summarise a distribution, in µs.
type Percentiles struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

// OWD is one-way delay. Without synchronised clocks only the relative
// figure means anything, and Absolute stays false.
type OWD struct {
	Relative Percentiles `json:"relative_us"`
	// Absolute is set when the control channel estimated the clock offset.
	Absolute     bool         `json:"absolute"`
	AbsoluteUs   *Percentiles `json:"absolute_us,omitempty"`
	OffsetUs     float64      `json:"clock_offset_us,omitempty"`
	ErrorBoundUs float64      `json:"clock_error_bound_us,omitempty"` // ± RTT/2 of the estimate
}

// Spacing is how well a paced sender kept its schedule.
type Spacing struct {
	TargetNs int64   `json:"target_ns"`
	MeanNs   float64 `json:"mean_ns"`
	ErrP50Ns float64 `json:"error_p50_ns"` // |actual − scheduled| send time
	ErrP99Ns float64 `json:"error_p99_ns"`
	ErrMaxNs float64 `json:"error_max_ns"`
	// GapP50Ns and GapP99Ns are the actual gaps between consecutive sends.
	// The errors above cannot pass one gap (a slot more than a gap late is
	// skipped, which keeps the schedule's phase), so they hide a sender
	// that could not keep up; the gaps and the mean show it.
	GapP50Ns float64 `json:"gap_p50_ns,omitempty"`
	GapP99Ns float64 `json:"gap_p99_ns,omitempty"`
	Samples  int64   `json:"samples"`
}

// Held reports whether the sender held its target spacing: its mean gap
// within 10% of the target. A sender that could not (too short a gap for
// the host, or a descheduled thread) sent at a wider spacing than asked.
func (s Spacing) Held() bool {
	return s.TargetNs <= 0 || s.MeanNs <= 0 || s.MeanNs <= 1.1*float64(s.TargetNs)
}

// Schedule is how a paced sender kept its schedule, and what held it back
// when it did not.
type Schedule struct {
	RequestedBps float64 `json:"requested_bps"`
	SentBps      float64 `json:"sent_bps"` // over the sender's own span
	// WrittenOff counts datagrams the schedule dropped because the sender
	// was late: more than its debt bound behind with -b (a stall, or too
	// slow), or more than a gap late with --spacing (a skipped slot).
	WrittenOff int64 `json:"written_off,omitempty"`
	// CPUPercent is the sending thread's CPU time over its span, in % of
	// one core; 0 where unknown.
	CPUPercent float64 `json:"cpu_percent,omitempty"`
	// BufferFull counts sends refused for a full queue (ENOBUFS, EAGAIN).
	BufferFull int64 `json:"buffer_full,omitempty"`
	Sends      int64 `json:"sends"`                // send calls
	SlowSends  int64 `json:"slow_sends,omitempty"` // send calls longer than a slot
	// Spin: the pacer busy-waited the end of each gap (--spin); the CPU
	// figure is then mostly its cost.
	Spin bool `json:"spin,omitempty"`
	// Limit names what held the rate back: "CPU-bound", "socket buffer
	// full", "slow send calls", "descheduled" (ready, but not given a CPU
	// in time), "unknown"; "" when the rate was held.
	Limit string `json:"limit,omitempty"`
}

// SNMP is the host's UDP counters over the test (from /proc/net/snmp).
type SNMP struct {
	InDatagrams  uint64 `json:"in_datagrams"`
	InErrors     uint64 `json:"in_errors"`
	RcvbufErrors uint64 `json:"rcvbuf_errors"`
	SndbufErrors uint64 `json:"sndbuf_errors"`
	NoPorts      uint64 `json:"no_ports"`
	InCsumErrors uint64 `json:"in_csum_errors"`
	OutDatagrams uint64 `json:"out_datagrams"`
	MemErrors    uint64 `json:"mem_errors"`
}
