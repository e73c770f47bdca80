// Package tcpinfo samples the kernel's TCP_INFO for a connection: the
// Web100 view of TCP (cwnd, RTT, retransmits, delivery rate and the time
// the sender spent limited by the receiver's window or its own buffer).
// It reads an MPTCP connection too: its own figures and each subflow's
// TCP_INFO and addresses (GetMPTCP).
package tcpinfo

import (
	"errors"
	"fmt"
)

// ErrUnsupported is returned where the operating system gives no
// TCP_INFO; errors.Is(err, errors.ErrUnsupported) holds for it too.
var ErrUnsupported = fmt.Errorf("TCP_INFO: %w on this operating system", errors.ErrUnsupported)

// Info is one TCP_INFO sample. Times are microseconds, rates bytes per
// second, windows and counters bytes unless the name says segments.
type Info struct {
	State       uint8  `json:"state"`
	CAState     uint8  `json:"ca_state"`
	RTTus       uint32 `json:"rtt_us"`
	RTTVarus    uint32 `json:"rttvar_us"`
	MinRTTus    uint32 `json:"min_rtt_us"`
	SndMSS      uint32 `json:"snd_mss"`
	RcvMSS      uint32 `json:"rcv_mss"`
	AdvMSS      uint32 `json:"advmss"`
	PMTU        uint32 `json:"pmtu"`
	SndCwnd     uint32 `json:"snd_cwnd_segs"`
	SndSsthresh uint32 `json:"snd_ssthresh_segs"`
	Unacked     uint32 `json:"unacked_segs"`
	Lost        uint32 `json:"lost_segs"`
	// LastDataRecvms is how long ago, in ms (the kernel's jiffies), the
	// last data segment arrived: when the network, not the reader, last
	// delivered.
	LastDataRecvms uint32 `json:"-"`
	TotalRetrans   uint32 `json:"total_retrans"`
	Reordering     uint32 `json:"reordering"`
	RcvSpace       uint32 `json:"rcv_space"`
	RcvSsthresh    uint32 `json:"rcv_ssthresh"`
	RcvRTTus       uint32 `json:"rcv_rtt_us"`
	// RcvOOOPack counts the segments that arrived out of order (Linux
	// 5.4 on): data the reader could not have until a hole filled.
	RcvOOOPack    uint32 `json:"rcv_ooopack,omitempty"`
	SndWnd        uint32 `json:"snd_wnd"`
	RcvWnd        uint32 `json:"rcv_wnd"`
	NotsentBytes  uint32 `json:"notsent_bytes"`
	PacingRate    uint64 `json:"pacing_rate"`
	DeliveryRate  uint64 `json:"delivery_rate"`
	AppLimited    bool   `json:"delivery_rate_app_limited"`
	BytesSent     uint64 `json:"bytes_sent"`
	BytesAcked    uint64 `json:"bytes_acked"`
	BytesReceived uint64 `json:"bytes_received"`
	BytesRetrans  uint64 `json:"bytes_retrans"`
	SegsOut       uint32 `json:"segs_out"`
	SegsIn        uint32 `json:"segs_in"`
	// DataSegsIn counts the segments that carried data, in order or not,
	// duplicates too (GRO's merged segments each).
	DataSegsIn      uint32 `json:"data_segs_in,omitempty"`
	BusyTimeus      uint64 `json:"busy_time_us"`
	RwndLimitedus   uint64 `json:"rwnd_limited_us"`
	SndbufLimitedus uint64 `json:"sndbuf_limited_us"`
}

// CwndBytes is the congestion window in bytes.
func (i *Info) CwndBytes() uint64 { return uint64(i.SndCwnd) * uint64(i.SndMSS) }
