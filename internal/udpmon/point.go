// Package udpmon describes UDPmon's sweep (docs/metrics.md, "UDPmon
// method"): a paced native UDP test of a fixed number of datagrams for
// each payload size and inter-packet spacing (Plan), and what it
// measured (Point, Sweep); internal/runner/udpmonrun runs it. Each point is reported with the achieved
// spacing, the wire rates sent and received, loss, re-ordering, jitter,
// relative one-way delay, both hosts' CPU split and interrupts, and the
// UDP counters with a verdict on where lost datagrams were dropped.
package udpmon

import (
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// Per-datagram framing on an Ethernet wire, beyond the UDP payload: UDP
// header 8, IPv4 header 20, Ethernet header 14, FCS 4, preamble 8 and
// inter-frame gap 12 (docs/metrics.md, "UDPmon method").
const WireOverhead = 8 + 20 + 14 + 4 + 8 + 12

// WireBytes is what a datagram of payload bytes occupies on the wire.
func WireBytes(payload int) int { return payload + WireOverhead }

// Point is one (size, spacing) point of a sweep.
type Point struct {
	Size    int           `json:"size"`       // UDP payload, bytes
	Spacing time.Duration `json:"spacing_ns"` // target gap between datagrams; 0: as fast as possible
	Count   int64         `json:"count"`      // datagrams asked for
	// Error says why the point failed (timeout, server busy); its
	// figures are then what was measured, if anything.
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"` // the point's wall time, setup included

	// Sender.
	Sent       int64 `json:"sent"`
	SendErrors int64 `json:"send_errors"`
	// AchievedSpacingNs is the mean gap between sends, and
	// AchievedSpacingP99Ns the 99th percentile of the actual gaps;
	// SpacingErr* are the pacer's |actual − scheduled| send times (paced
	// points only), which cannot pass one gap: a slot later than that is
	// skipped. SpacingNotHeld says the mean gap was more than 10% wider
	// than asked: the sender could not keep the spacing.
	AchievedSpacingNs    float64 `json:"achieved_spacing_ns"`
	AchievedSpacingP99Ns float64 `json:"achieved_spacing_p99_ns,omitempty"`
	SpacingNotHeld       bool    `json:"spacing_not_held,omitempty"`
	SpacingErrP50Ns      float64 `json:"spacing_error_p50_ns,omitempty"`
	SpacingErrP99Ns      float64 `json:"spacing_error_p99_ns,omitempty"`
	SpacingErrMaxNs      float64 `json:"spacing_error_max_ns,omitempty"`
	// SentWireBps is WireBytes × 8 ÷ the achieved spacing; SentUserBps
	// the same for the payload alone.
	SentWireBps float64 `json:"sent_wire_bps"`
	SentUserBps float64 `json:"sent_user_bps"`

	// Receiver.
	Received         int64   `json:"received"`
	Lost             int64   `json:"lost"`
	LossPercent      float64 `json:"loss_percent"`
	Late             int64   `json:"late"`
	Duplicates       int64   `json:"duplicates"`
	Reordered        int64   `json:"reordered"`
	ReorderMaxExtent int64   `json:"reorder_max_extent"`
	JitterMs         float64 `json:"jitter_ms"`
	// ReceiveSeconds is the span from the first arrival to the last;
	// RecvWireBps and RecvUserBps are the received rates over it.
	ReceiveSeconds float64 `json:"receive_seconds"`
	RecvWireBps    float64 `json:"recv_wire_bps"`
	RecvUserBps    float64 `json:"recv_user_bps"`
	// RelativeOWD is the one-way delay less its minimum (PDV), µs.
	RelativeOWD     *result.Percentiles `json:"relative_owd_us,omitempty"`
	TimestampSource string              `json:"timestamp_source,omitempty"`
	// Histograms of the inter-arrival times and of the relative OWD.
	InterArrival         *result.Histogram `json:"inter_arrival_histogram,omitempty"`
	RelativeOWDHistogram *result.Histogram `json:"relative_owd_histogram,omitempty"`

	// Hosts: CPU split and interrupts (result.HostCounters), and the UDP
	// SNMP counters over the point.
	SenderHost      *result.HostCounters `json:"sender_host,omitempty"`
	ReceiverHost    *result.HostCounters `json:"receiver_host,omitempty"`
	SenderSNMP      *result.SNMP         `json:"sender_udp_counters,omitempty"`
	ReceiverSNMP    *result.SNMP         `json:"receiver_udp_counters,omitempty"`
	SenderRole      string               `json:"sender_role"` // client, or server with --reverse
	LossAttribution *figures.UDPLoss     `json:"loss_attribution,omitempty"`
}

// KernelPercent is a host's kernel-mode share (system + softirq + irq) of
// its busiest CPU, as UDPmon plotted it; 0 without counters.
func KernelPercent(h *result.HostCounters) (busiest string, pct float64) {
	if h == nil {
		return "", 0
	}
	for _, c := range h.CPUs {
		if c.Name == "cpu" {
			continue
		}
		if k := c.System + c.SoftIRQ + c.IRQ; k > pct || busiest == "" {
			busiest, pct = c.Name, k
		}
	}
	return busiest, pct
}

// InterruptTotal is the interrupts a host took over the point on the
// lines it reports (its busiest).
func InterruptTotal(h *result.HostCounters) uint64 {
	if h == nil {
		return 0
	}
	var n uint64
	for _, d := range h.Interrupts {
		n += d.Total
	}
	return n
}

// Sweep is a whole run.
type Sweep struct {
	Server    string    `json:"server"`
	StartedAt time.Time `json:"started_at"`
	Reverse   bool      `json:"reverse,omitempty"`
	Count     int64     `json:"count"`
	Points    []Point   `json:"points"`
	Failed    int       `json:"failed"`
	Seconds   float64   `json:"seconds"`
	// Warnings are about the whole sweep: run through a lab, whether its
	// router fell behind (lab.RouterWatch).
	Warnings []string `json:"warnings,omitempty"`
	// Lab names the lab it ran through and its hosts' TCP buffers
	// (lab.RouterWatch.Line); "" outside a lab.
	Lab string `json:"lab,omitempty"`
}
