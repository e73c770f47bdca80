// Package result holds what a test measured, as plain structs. Both ends
// fill an End with their own view; a Result joins the two. Emitters (text,
// JSON, CSV, plots) only read it.
package result

import (
	"encoding/json"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// Roles of an end.
const (
	RoleClient = "client"
	RoleServer = "server"
)

// Result is one test as seen from the end that holds it. Local is that end,
// Remote is what the peer reported.
type Result struct {
	Spec        spec.Spec `json:"spec"`
	Token       string    `json:"token"`
	StartedAt   time.Time `json:"started_at"`
	ServerAddr  string    `json:"server_addr"` // host:port the client dialled
	ConnectHost string    `json:"connect_host"`
	ConnectPort int       `json:"connect_port"`
	// ControlRTT is the client's measure of the control connection's
	// round trip (its greeting exchange): the server's clock starts about
	// half of it after the client's.
	ControlRTT time.Duration `json:"control_rtt_ns,omitempty"`
	// ControlMSS is the client's control connection's TCP MSS, as iperf3
	// -V shows it; 0 when unknown.
	ControlMSS int `json:"control_mss,omitempty"`
	Local      End `json:"local"`
	Remote     End `json:"remote"`
	// Error is set when the test failed or was cut short; the figures
	// then cover what was measured until that point.
	Error string `json:"error,omitempty"`
	// Warnings say what, outside the path, limited the test (the lab's
	// router fell behind, say): one line each.
	Warnings []string `json:"warnings,omitempty"`
	// Lab names the lab it ran through and its hosts' TCP buffers
	// (lab.RouterWatch.Line); "" outside a lab.
	Lab string `json:"lab,omitempty"`
	// ServerOutput is the server's own report of the test, when the
	// client asked for it (--get-server-output).
	ServerOutput *ServerOutput `json:"server_output,omitempty"`
}

// ServerOutput is a server's report of a test as it rendered it: text,
// or a JSON document when the server writes JSON.
type ServerOutput struct {
	Text string          `json:"text,omitempty"`
	JSON json.RawMessage `json:"json,omitempty"`
}

// End is one host's view of a test.
type End struct {
	Role      string     `json:"role"`
	Host      Host       `json:"host"`
	Streams   []Stream   `json:"streams"`
	Intervals []Interval `json:"intervals"`
	// RowsJoined, when above 1, says the end kept its rows joined up to
	// that many of the test's intervals at a time: a server keeps a
	// bounded number of rows per test (flowrun.Runner.MaxStreamRows).
	// The joined rows still add up to the totals.
	RowsJoined int     `json:"rows_joined,omitempty"`
	CPU        CPU     `json:"cpu"`
	Limits     *Limits `json:"limits,omitempty"`
	// OneProcess says both ends ran in one process (selftest): the CPU
	// figure is the process's, both ends' work together, and the same on
	// both ends.
	OneProcess bool `json:"one_process,omitempty"`
	// ConcurrentTests is how many other tests the server ran at the same
	// time; its CPU figure is process-wide and so includes theirs.
	ConcurrentTests int `json:"concurrent_tests,omitempty"`
	// UDPCounters are the host's UDP SNMP deltas over a UDP test.
	UDPCounters *SNMP  `json:"udp_counters,omitempty"`
	Error       string `json:"error,omitempty"`
	// BottleneckBps is the path's bottleneck rate, in bit/s, as this end
	// was told it (--bottleneck); 0 when unknown. The RFC 6349 Transfer
	// Time Ratio needs it.
	BottleneckBps float64 `json:"bottleneck_bps,omitempty"`
	// RR is the end's view of a request-response test (result/latency.go).
	RR *RR `json:"rr,omitempty"`
	// HostCounters are the host's CPU split and interrupts over the test,
	// when the spec asks for them (result/hostcounters.go).
	HostCounters *HostCounters `json:"host_counters,omitempty"`
	// UDPArrivals are the UDP receivers' arrival histograms, when the spec
	// asks for them.
	UDPArrivals []UDPArrivals `json:"udp_arrivals,omitempty"`
}

// Host names the machine and software of an end.
type Host struct {
	Hostname string `json:"hostname,omitempty"`
	System   string `json:"system,omitempty"` // uname-style: OS, release, machine
	Version  string `json:"version,omitempty"`
}

// Limits are the kernel's socket-buffer limits and TCP defaults of an end.
type Limits struct {
	RmemMax      int64    `json:"rmem_max"`
	WmemMax      int64    `json:"wmem_max"`
	TCPRmem      [3]int64 `json:"tcp_rmem"`
	TCPWmem      [3]int64 `json:"tcp_wmem"`
	Congestion   string   `json:"congestion_control,omitempty"`
	DefaultQdisc string   `json:"default_qdisc,omitempty"`
	// Interface holds the test's local address, and Qdisc is the kind of
	// its root queueing discipline ("fq", "mq", "tbf", "noqueue"): what
	// the test's packets actually met, where DefaultQdisc is only what
	// new interfaces get. Empty where they could not be read.
	Interface string `json:"interface,omitempty"`
	Qdisc     string `json:"qdisc,omitempty"`
}

// CPU is the process CPU use of an end over the test, as percent of one
// core (so it can exceed 100 with several threads), as iperf3 reports it.
type CPU struct {
	UserPercent   float64 `json:"user_percent"`
	SystemPercent float64 `json:"system_percent"`
	TotalPercent  float64 `json:"total_percent"`
	// PeakRSSBytes is the end's process's largest resident memory when
	// the test ended (a server's covers the tests it ran at once); 0
	// where the system does not say.
	PeakRSSBytes int64 `json:"peak_rss_bytes,omitempty"`
}

// Socket is what an end asked of a data socket and what the kernel granted.
type Socket struct {
	SndBufRequested int64 `json:"sndbuf_requested"` // 0: not set, autotuning
	SndBufGranted   int64 `json:"sndbuf_granted"`
	RcvBufRequested int64 `json:"rcvbuf_requested"`
	RcvBufGranted   int64 `json:"rcvbuf_granted"`
	// SndBufCap and RcvBufCap are the kernel limits that capped a request
	// above them (net.core.wmem_max, rmem_max): the socket got the limit,
	// as it would for a request of the limit itself. 0: not capped.
	SndBufCap int64 `json:"sndbuf_capped_by_wmem_max,omitempty"`
	RcvBufCap int64 `json:"rcvbuf_capped_by_rmem_max,omitempty"`
	// SndBufFinal and RcvBufFinal are a TCP socket's buffers at the end of
	// the test: autotuning grows them from what was granted at the start.
	SndBufFinal int64  `json:"sndbuf_final,omitempty"`
	RcvBufFinal int64  `json:"rcvbuf_final,omitempty"`
	MSS         int    `json:"mss"`
	MTU         int    `json:"mtu"` // path MTU of the connection, 0 if unknown
	Congestion  string `json:"congestion,omitempty"`
}

// ReadLength is one entry of the receiver's read-length histogram.
type ReadLength struct {
	Length int   `json:"length"`
	Count  int64 `json:"count"`
}

// Stream is one data connection's totals from one end's view. Start and
// End are seconds since that end's test start; the counted span excludes
// the omitted start.
type Stream struct {
	ID         int     `json:"id"`
	Sender     bool    `json:"sender"` // this end sent on this stream
	LocalAddr  string  `json:"local_addr"`
	RemoteAddr string  `json:"remote_addr"`
	Socket     Socket  `json:"socket"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Bytes      int64   `json:"bytes"`
	// Drain, on a receiver, is how long it went on receiving after it
	// learned that the sender had stopped, in seconds: what the sender's
	// socket buffer and the path's queue still held. Its span ends at its
	// last byte, so the drain is in its time only while bytes arrive.
	Drain float64 `json:"drain,omitempty"`
	// Calls is the number of write (sender) or read (receiver) calls.
	Calls       int64        `json:"calls"`
	ReadLengths []ReadLength `json:"read_lengths,omitempty"`
	// Sender-side TCP figures over the counted span.
	Retransmits int64         `json:"retransmits"`
	MaxCwnd     uint64        `json:"max_snd_cwnd,omitempty"`
	MaxSndWnd   uint64        `json:"max_snd_wnd,omitempty"`
	MinRTTus    uint32        `json:"min_rtt_us,omitempty"`
	MaxRTTus    uint32        `json:"max_rtt_us,omitempty"`
	MeanRTTus   uint32        `json:"mean_rtt_us,omitempty"`
	TCPInfo     *tcpinfo.Info `json:"tcp_info,omitempty"` // last sample
	// TCPStats and TCPTimeline are the sender's TCP internals (result/tcpinfo.go).
	TCPStats    *TCPStats    `json:"tcp_stats,omitempty"`
	TCPTimeline *TCPTimeline `json:"tcp_timeline,omitempty"`
	// MPTCP is the connection's MPTCP figures, its subflows' among them,
	// on a stream that asked for MPTCP or whose socket is MPTCP's; a
	// connection that fell back to TCP says so (Fallback) and no more.
	// With several subflows, the TCP figures above are the first
	// subflow's, but Retransmits, which are all of theirs, and TCPStats
	// and TCPTimeline are left out.
	MPTCP *tcpinfo.MPTCP `json:"mptcp,omitempty"`
	// UDP holds a UDP stream's figures over the counted span.
	UDP *UDP `json:"udp,omitempty"`
	// TripTimes is a TCP receiver's --trip-times figures over the
	// counted span.
	TripTimes *TripTimes `json:"trip_times,omitempty"`
	// UDPSettlements, on a UDP receiver's stream, are what each interval
	// row gains once the stream is over, so that the rows add up to the
	// totals (End.SettledIntervals applies them).
	UDPSettlements []UDPSettlement `json:"udp_row_settlements,omitempty"`
}

// Seconds is the length of the stream's counted span.
func (s Stream) Seconds() float64 { return s.End - s.Start }

// Interval is one reporting interval from one end's view.
type Interval struct {
	Index   int     `json:"index"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Omitted bool    `json:"omitted,omitempty"`
	// Tail marks the end's last row: what moved after its last full
	// interval (a sender's last writes, a receiver's drain of the
	// sender's socket buffer and the path's queue), over its own span,
	// which ends at the end's last byte. The rows and the tail add up to
	// the totals.
	Tail    bool             `json:"tail,omitempty"`
	Streams []StreamInterval `json:"streams"`
}

// StreamInterval is one stream during one interval. The TCP figures are
// sampled at the interval's end and are present on the sending end only.
type StreamInterval struct {
	ID     int   `json:"id"`
	Sender bool  `json:"sender"`
	Bytes  int64 `json:"bytes"`
	// On a TCP receiver whose kernel reports it, Bytes is what the kernel
	// took in during the interval (tcpi_bytes_received), which a reader
	// that was descheduled cannot inflate; AppBytes is what its reads
	// returned, and Backlog what waited unread in the socket at the cut.
	KernelCounted bool  `json:"kernel_counted,omitempty"`
	AppBytes      int64 `json:"app_bytes,omitempty"`
	Backlog       int64 `json:"backlog_bytes,omitempty"`
	// OutOfOrder counts the segments that arrived out of order during the
	// interval (tcpi_rcv_ooopack): after a loss, the data behind the hole
	// waits a round trip for the retransmission and then counts in
	// order all at once, so a row can show a round trip's worth more than
	// its span carried, and the row before it that much less.
	OutOfOrder int64 `json:"out_of_order_segments,omitempty"`
	// Delivered, on a TCP sender, is what the receiver acknowledged
	// during the interval (tcpi_bytes_acked), where Bytes is what was
	// written; HasDelivered says it was read.
	Delivered    int64 `json:"bytes_delivered,omitempty"`
	HasDelivered bool  `json:"has_bytes_delivered,omitempty"`
	Retransmits  int64 `json:"retransmits"` // during the interval
	// Calls is the write (sender) or read (receiver) calls made during the
	// interval, from the counter of the total's Calls.
	Calls      int64  `json:"calls,omitempty"`
	CwndBytes  uint64 `json:"snd_cwnd,omitempty"`
	SndWnd     uint64 `json:"snd_wnd,omitempty"`
	RTTus      uint32 `json:"rtt_us,omitempty"`
	RTTVarus   uint32 `json:"rttvar_us,omitempty"`
	PMTU       uint32 `json:"pmtu,omitempty"`
	HasTCPInfo bool   `json:"has_tcp_info,omitempty"`
	UDP        *UDP   `json:"udp,omitempty"`
	// TripTimes is a TCP receiver's --trip-times figures for the blocks
	// whose last byte it read during the interval.
	TripTimes *TripTimes `json:"trip_times,omitempty"`
}

// Seconds is the length of the interval.
func (iv Interval) Seconds() float64 { return iv.End - iv.Start }

// Rate returns bits per second for bytes over seconds, 0 for an empty span.
func Rate(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / seconds
}
