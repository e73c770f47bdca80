package result

// HostCounters are one host's counters over a test (docs/metrics.md,
// "UDPmon method"): where each CPU's time went, from /proc/stat, and the
// busiest interrupt lines, from /proc/interrupts. They describe the whole
// host, other work included.
type HostCounters struct {
	Seconds float64 `json:"seconds"`
	// CPUs is the aggregate ("cpu") first, then each CPU.
	CPUs []CPUSplit `json:"cpus,omitempty"`
	// Interrupts are the busiest lines, busiest first.
	Interrupts []IRQDelta `json:"interrupts,omitempty"`
	// MemUsedBytes is the host's memory in use (MemTotal − MemAvailable),
	// the larger of its values at the start and the end of the test: a
	// host short of memory is a hidden cause of a slow end.
	MemUsedBytes int64 `json:"mem_used_bytes,omitempty"`
	// Unavailable says why some counters are missing (not Linux, say).
	Unavailable string `json:"unavailable,omitempty"`
	// Samples are the whole host's CPU split and memory in use at each
	// interval's end, and at the test's: a receiver that was busy for
	// part of a long test shows where.
	Samples []HostSample `json:"samples,omitempty"`
}

// HostSample is the host's use over the period that ends at T seconds
// after the test's start: CPU in percent of all the host's time, memory
// in use at T.
type HostSample struct {
	T            float64 `json:"t"`
	User         float64 `json:"user"`
	System       float64 `json:"system"`
	SoftIRQ      float64 `json:"softirq"`
	MemUsedBytes int64   `json:"mem_used_bytes,omitempty"`
}

// CPUSplit is where one CPU's time went, in percent: user (with nice),
// system, softirq, irq, idle (with iowait) and other (steal).
type CPUSplit struct {
	Name    string  `json:"name"`
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	SoftIRQ float64 `json:"softirq"`
	IRQ     float64 `json:"irq"`
	Idle    float64 `json:"idle"`
	Other   float64 `json:"other,omitempty"`
}

// IRQDelta is how many interrupts one line took over the test.
type IRQDelta struct {
	IRQ    string   `json:"irq"`
	Desc   string   `json:"desc,omitempty"`
	Total  uint64   `json:"total"`
	PerCPU []uint64 `json:"per_cpu"`
}

// UDPArrivals are a UDP receiver's arrival figures over a whole stream,
// kept when the spec asks for histograms: the span from the first to the
// last arrival, the inter-arrival times and the relative one-way delay
// (OWD − min OWD, docs/metrics.md "One-way delay").
type UDPArrivals struct {
	StreamID int `json:"stream_id"`
	// Received counts the arrivals the figures are made of: every
	// datagram of the stream that arrived, duplicates and late ones
	// included.
	Received int64 `json:"received"`
	// FirstNs and LastNs are the first and last arrival, receiver's wall
	// clock (ns since the Unix epoch).
	FirstNs int64 `json:"first_ns"`
	LastNs  int64 `json:"last_ns"`
	// TimestampSource is "kernel" or "user-space".
	TimestampSource string     `json:"timestamp_source,omitempty"`
	InterArrival    *Histogram `json:"inter_arrival,omitempty"`
	RelativeOWD     *Histogram `json:"relative_owd,omitempty"`
}

// Seconds is the span from the first arrival to the last.
func (a UDPArrivals) Seconds() float64 { return float64(a.LastNs-a.FirstNs) / 1e9 }
