package result

import "time"

// RRUL is what `wireperf rrul` measured (flent's Realtime Response Under
// Load, docs/rrul.md): TCP flows up and down, one per DSCP class, with
// request-response probes before (idle), during (loaded) and after them,
// all on one time axis whose zero is the start of the idle phase.
type RRUL struct {
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	StartedAt time.Time `json:"started_at"`
	// The phases as planned, and where the load ran on the axis.
	IdleSeconds       float64     `json:"idle_seconds"`
	LoadSeconds       float64     `json:"load_seconds"`
	AfterSeconds      float64     `json:"after_seconds"`
	LoadStartSeconds  float64     `json:"load_start_seconds"`
	LoadEndSeconds    float64     `json:"load_end_seconds"`
	StepSeconds       float64     `json:"step_seconds"` // the series' bin
	UpBitsPerSecond   float64     `json:"up_bits_per_second"`
	DownBitsPerSecond float64     `json:"down_bits_per_second"`
	Flows             []RRULFlow  `json:"flows"`
	Probes            []RRULProbe `json:"probes"`

	// Congestion is the flows' congestion control as asked (-C); empty
	// when each sender used its host's default, which its flows name.
	Congestion string `json:"congestion,omitempty"`
	// Latency is every probe's RTT together, per phase.
	Latency RRULLatency `json:"latency"`
	// HostDelays name the phases in which a host, not the network, added
	// delay to a probe (rrload.HostDelays), the probe's class first in
	// the reason.
	HostDelays []RRHostDelay `json:"host_delays,omitempty"`
	// CPU is this client's own process over the whole test; ServerCPU the
	// highest the server reported for one of the flows' tests (its process
	// serves them all).
	CPU       CPU      `json:"cpu"`
	ServerCPU *CPU     `json:"server_cpu,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// RRULFlow is one TCP flow: its class, direction and goodput (the
// receiver's bytes over the receiver's time), and its goodput per step on
// the common axis.
type RRULFlow struct {
	Class         string        `json:"class"` // BE, BK, CS5, EF
	TOS           int           `json:"tos"`
	Direction     string        `json:"direction"` // up (client → server) or down
	Bytes         int64         `json:"bytes"`
	Seconds       float64       `json:"seconds"`
	BitsPerSecond float64       `json:"bits_per_second"`
	Retransmits   int64         `json:"retransmits"`
	Series        []SeriesPoint `json:"series,omitempty"` // Mbit/s
	// Congestion is the sender's socket's congestion control, as its
	// kernel reported it.
	Congestion string `json:"congestion,omitempty"`

	// The sender's last TCP_INFO, where its end reported one: its RTT
	// and congestion window, and the shares of its busy time that the
	// receiver's window and its own send buffer held it back (which end
	// limited the flow; the rest was the network's).
	SenderRTTms     float64  `json:"sender_rtt_ms,omitempty"`
	SenderCwndBytes uint64   `json:"sender_cwnd_bytes,omitempty"`
	RwndLimited     *float64 `json:"rwnd_limited,omitempty"`
	SndbufLimited   *float64 `json:"sndbuf_limited,omitempty"`
	Error           string   `json:"error,omitempty"`
}

// RRULProbe is one class's UDP request-response probe: its phases as rr
// reports them, and its mean RTT per step on the common axis.
type RRULProbe struct {
	Class  string        `json:"class"`
	TOS    int           `json:"tos"`
	Phases []RRPoint     `json:"phases"`           // idle, loaded, after
	Series []SeriesPoint `json:"series,omitempty"` // ms
	Error  string        `json:"error,omitempty"`
}

// RRULLatency is the probes' RTT (T4 − T1) per phase, all classes
// together, in µs; Increase is loaded less idle, percentile by
// percentile; the histograms give the CDFs.
type RRULLatency struct {
	Idle            Percentiles `json:"idle_us"`
	Loaded          Percentiles `json:"loaded_us"`
	After           Percentiles `json:"after_us"`
	Increase        Percentiles `json:"increase_us"`
	IdleHistogram   *Histogram  `json:"idle_histogram,omitempty"`
	LoadedHistogram *Histogram  `json:"loaded_histogram,omitempty"`
}

// SeriesPoint is one value of a series over time, at T seconds on the
// series' axis.
type SeriesPoint struct {
	T float64 `json:"t"`
	V float64 `json:"v"`
}
