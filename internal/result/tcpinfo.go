package result

// TCP internals of a sending stream (docs/metrics.md, "TCP internals"):
// its TCP_INFO timeline, and the counters the limited-time breakdown and
// the RFC 6349 figures are computed from (internal/advise computes them).

// TCPTimeline is a sending stream's TCP_INFO sampled at a fixed period.
type TCPTimeline struct {
	// Period is the seconds between samples: the sampling period asked
	// for, times a power of two when a long test was thinned to fit.
	Period float64 `json:"period"`
	// Samples are in time order; the last one is taken when the sender
	// stopped.
	Samples []TCPSample `json:"samples"`
	// Unavailable says why there are no samples (a system without
	// TCP_INFO), or why they stop early.
	Unavailable string `json:"unavailable,omitempty"`
}

// TCPSample is one TCP_INFO reading of a sending stream. Times are
// microseconds, rates bytes per second, windows and counters bytes, except
// where the name says segments.
type TCPSample struct {
	T               float64 `json:"t"` // seconds since the end's test start
	RTTus           uint32  `json:"rtt_us"`
	RTTVarus        uint32  `json:"rttvar_us"`
	MinRTTus        uint32  `json:"min_rtt_us"`
	SndMSS          uint32  `json:"snd_mss"`
	SndCwnd         uint32  `json:"snd_cwnd_segs"`
	SndSsthresh     uint32  `json:"snd_ssthresh_segs"` // 2147483647 until slow start first ends
	TotalRetrans    uint32  `json:"total_retrans"`     // segments, since the connection began
	PacingRate      uint64  `json:"pacing_rate"`
	DeliveryRate    uint64  `json:"delivery_rate"`
	BytesAcked      uint64  `json:"bytes_acked"`
	BytesRetrans    uint64  `json:"bytes_retrans"`
	NotsentBytes    uint32  `json:"notsent_bytes"`
	SndWnd          uint32  `json:"snd_wnd"` // the receiver's advertised window
	RcvWnd          uint32  `json:"rcv_wnd"`
	BusyUs          uint64  `json:"busy_time_us"`
	RwndLimitedUs   uint64  `json:"rwnd_limited_us"`
	SndbufLimitedUs uint64  `json:"sndbuf_limited_us"`
	// BBR's own model, when the algorithm is bbr.
	BBRBandwidth uint64 `json:"bbr_bw,omitempty"` // bytes per second
	BBRMinRTTus  uint32 `json:"bbr_min_rtt_us,omitempty"`
}

// TCPStats are a sending stream's TCP counters over the counted span (the
// omitted start left out), from the kernel's TCP_INFO.
type TCPStats struct {
	BytesSent    uint64 `json:"bytes_sent"`    // segments' payload handed to IP, retransmissions included
	BytesRetrans uint64 `json:"bytes_retrans"` // of which retransmitted
	BytesAcked   uint64 `json:"bytes_acked"`
	// The limited-time breakdown, Web100's SndLimTime: of the time the
	// sender had data in flight (busy), how long the receiver's window
	// and the sender's own buffer held it back.
	BusyUs          uint64 `json:"busy_time_us"`
	RwndLimitedUs   uint64 `json:"rwnd_limited_us"`
	SndbufLimitedUs uint64 `json:"sndbuf_limited_us"`
	// BaselineRTTus is the lowest RTT the connection measured (TCP_INFO
	// min_rtt, which includes the handshake's), the idle path's RTT as
	// far as this stream can tell.
	BaselineRTTus uint32 `json:"baseline_rtt_us,omitempty"`
	// MeanRTTus is the mean smoothed RTT over the timeline's samples
	// while data moved; RTTSamples counts them.
	MeanRTTus  uint32 `json:"mean_rtt_us,omitempty"`
	RTTSamples int    `json:"rtt_samples,omitempty"`
	// MaxSndWnd is the largest window the receiver advertised.
	MaxSndWnd uint64 `json:"max_snd_wnd,omitempty"`
	// CwndReductions counts the samples in which TCP cut its window: slow
	// start ending in a loss, and every later change of ssthresh (which
	// moves only on a congestion event: a loss, or ECN). Several events
	// within one sampling period count once.
	CwndReductions int `json:"cwnd_reductions"`
	// SlowStart says when the first slow start ended; nil when it did not
	// end during the test (or there was no timeline).
	SlowStart *SlowStart `json:"slow_start,omitempty"`
	// SlowStartOngoing is set when the timeline shows slow start still
	// running when the sender stopped.
	SlowStartOngoing bool `json:"slow_start_ongoing,omitempty"`
	// Duration is the seconds from the test start to the last sample.
	Duration float64 `json:"duration,omitempty"`
}

// SlowStart is the end of a stream's first slow start, found at the
// sampling period's resolution.
type SlowStart struct {
	End        float64 `json:"end"`   // seconds since the test start: the first sample that shows it
	Cause      string  `json:"cause"` // SlowStartLoss or SlowStartSsthresh
	CwndBytes  uint64  `json:"cwnd_bytes"`
	BytesAcked uint64  `json:"bytes_acked"` // delivered by then
}

// Why slow start ended.
const (
	SlowStartLoss     = "loss"     // a retransmission
	SlowStartSsthresh = "ssthresh" // ssthresh set without loss: HyStart's delay signal, ECN, or a cached value
)
