package result

// Request-response (latency) figures: docs/metrics.md, "Request-response
// (latency)" and "Latency under load".

// Histogram is a distribution as its non-empty buckets, in µs. Each
// bucket holds the values from From to To (both inclusive, to the
// histogram's precision).
type Histogram struct {
	Unit    string            `json:"unit"` // "us"
	Count   int64             `json:"count"`
	Buckets []HistogramBucket `json:"buckets"`
}

// HistogramBucket is one bucket of a Histogram.
type HistogramBucket struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Count int64   `json:"count"`
}

// RR is one end's view of a request-response test.
type RR struct {
	Mode string `json:"mode"` // udp, tcp or crr

	// Client side.
	Points []RRPoint `json:"points,omitempty"` // one per request size, or per load phase
	// Clock is the estimate of the server's clock minus the client's that
	// labels the one-way delays; nil when none could be made.
	Clock *ClockOffset `json:"clock,omitempty"`
	// Timestamps says how T1..T4 were taken.
	Timestamps string `json:"timestamps,omitempty"`
	// BusyPoll is set when the end spun on its socket instead of blocking;
	// BusyPollSocket says whether SO_BUSY_POLL was granted too.
	BusyPoll       bool   `json:"busy_poll,omitempty"`
	BusyPollSocket string `json:"busy_poll_socket,omitempty"`
	// Load is set for latency under load (rr --load).
	Load *RRLoad `json:"load,omitempty"`

	// Server side.
	Served      int64        `json:"served,omitempty"`      // requests answered
	Connections int64        `json:"connections,omitempty"` // data connections accepted (crr)
	Refused     int64        `json:"refused,omitempty"`     // malformed or oversized requests dropped
	ServerTime  *Percentiles `json:"server_time_us,omitempty"`
}

// RRPoint is one size point, or one phase of a test under load.
type RRPoint struct {
	Label        string `json:"label,omitempty"` // load phase: idle, loaded, after
	RequestSize  int    `json:"request_size"`
	ResponseSize int    `json:"response_size"`
	Sent         int64  `json:"sent"`      // requests sent
	Completed    int64  `json:"completed"` // responses received in time
	Lost         int64  `json:"lost"`      // UDP: no response within the timeout
	Late         int64  `json:"late"`      // responses that came after their timeout (counted lost)
	Errors       int64  `json:"errors,omitempty"`
	// Seconds is the point's wall time; TransactionsPerSecond is
	// Completed ÷ Seconds.
	Seconds               float64 `json:"seconds"`
	TransactionsPerSecond float64 `json:"transactions_per_second"`
	// RTT is T4 − T1 at the client.
	RTT Percentiles `json:"rtt_us"`
	// NetworkRTT is (T4 − T1) − (T3 − T2) − ClientTime: the RTT without
	// the server's time and the client's own receive delay; ServerTime is
	// T3 − T2.
	NetworkRTT Percentiles `json:"network_rtt_us"`
	ServerTime Percentiles `json:"server_time_us"`
	// ClientTime is the client's own receive delay, user-space T4 less
	// the kernel's receive time of the response (SO_TIMESTAMPNS), when
	// the socket gives one.
	ClientTime *Percentiles `json:"client_time_us,omitempty"`
	// HostFlags name the host whose scheduling is inside a network RTT
	// figure (max, p99), from the transactions' own timestamps.
	HostFlags []RRHostFlag `json:"host_flags,omitempty"`
	// ForwardOWD (T2 − T1) and BackwardOWD (T4 − T3) are corrected by the
	// clock offset estimate (RR.Clock) and only as good as its error bound.
	ForwardOWD  *Percentiles `json:"forward_owd_us,omitempty"`
	BackwardOWD *Percentiles `json:"backward_owd_us,omitempty"`
	// The whole distributions.
	RTTHistogram        *Histogram `json:"rtt_histogram,omitempty"`
	NetworkRTTHistogram *Histogram `json:"network_rtt_histogram,omitempty"`
	// Spacing is how well isochronous requests kept their schedule.
	Spacing *Spacing `json:"spacing,omitempty"`
}

// RRHostFlag says that a network RTT figure of a point holds
// transactions in which a host's own scheduling, not the network, took
// longer than HostDelayedUs: the client's between T1 and the send's
// return or between the kernel's receive time and T4, the server's
// between T2 and T3.
type RRHostFlag struct {
	Figure string `json:"figure"` // "max" or "p99"
	Host   string `json:"host"`   // RoleClient or RoleServer
	// NetworkRTTUs is the figure as printed; WithoutUs the same figure
	// over the transactions no host delayed (nil when every one was).
	NetworkRTTUs float64  `json:"network_rtt_us"`
	WithoutUs    *float64 `json:"without_host_delayed_us,omitempty"`
	// Transactions is how many of the point's transactions this host
	// delayed; ShareUs the most it added to one of them (for "max", to
	// that transaction).
	Transactions  int64   `json:"transactions"`
	ShareUs       float64 `json:"share_us"`
	HostDelayedUs float64 `json:"host_delayed_us"` // the threshold
}

// RRPhase is one phase of latency under load, planned and as run.
type RRPhase struct {
	Label          string  `json:"label"`
	PlannedSeconds float64 `json:"planned_seconds"`
	Seconds        float64 `json:"seconds"`
	Incomplete     bool    `json:"incomplete,omitempty"`
}

// LossPercent is lost ÷ sent, in percent.
func (p RRPoint) LossPercent() float64 {
	if p.Sent == 0 {
		return 0
	}
	return 100 * float64(p.Lost) / float64(p.Sent)
}

// ClockOffset is an NTP-style estimate of the server's clock minus the
// client's (stats.EstimateOffset). The true offset lies within
// ± ErrorBoundUs of OffsetUs.
type ClockOffset struct {
	Source       string  `json:"source"` // "control channel" or "transactions"
	OffsetUs     float64 `json:"offset_us"`
	ErrorBoundUs float64 `json:"error_bound_us"`
	Samples      int     `json:"samples"`
}

// RRLoad is latency under load: RR probes before (idle), during (loaded)
// and after a bulk TCP or UDP test. The phases are RR.Points labelled "idle",
// "loaded" and "after".
type RRLoad struct {
	Protocol  string `json:"protocol"` // of the load: tcp or udp
	Streams   int    `json:"streams"`
	Direction string `json:"direction"` // up (client → server), down or both
	// BitsPerSecond is the load's goodput, per direction, receivers' view.
	UpBitsPerSecond   float64 `json:"up_bits_per_second,omitempty"`
	DownBitsPerSecond float64 `json:"down_bits_per_second,omitempty"`
	// LostPercent is a UDP load's datagram loss, per direction.
	UpLostPercent   *float64 `json:"up_lost_percent,omitempty"`
	DownLostPercent *float64 `json:"down_lost_percent,omitempty"`
	// Increase is the loaded RTT less the idle RTT, percentile by
	// percentile, in µs: the queueing the load added (bufferbloat).
	Increase Percentiles `json:"increase_us"`
	// LoadError says why the load test failed, if it did.
	LoadError string `json:"load_error,omitempty"`
	// Phases are how long each phase was meant to run and ran; a phase
	// that ran short (the test ended early) is Incomplete, and its
	// figures cover only what it ran.
	Phases []RRPhase `json:"phases,omitempty"`
	// LoadResult is the bulk test's own result.
	LoadResult *Result `json:"load_result,omitempty"`
	// HostDelays name the phases in which a host, not the network, added
	// delay (rrload.HostDelays).
	HostDelays []RRHostDelay `json:"host_delays,omitempty"`
}

// RRHostDelay is a phase in which a host added delay to the probes: the
// server's own service time rose, or the network RTT (which holds the
// client's own scheduling) went above what the path can give.
type RRHostDelay struct {
	Phase   string  `json:"phase"`
	Host    string  `json:"host"`     // RoleClient or RoleServer
	AddedUs float64 `json:"added_us"` // at the 99th percentile
	Reason  string  `json:"reason"`
}
