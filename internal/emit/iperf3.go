package emit

import (
	"encoding/json"

	"github.com/wireperf/wireperf/internal/result"
)

// The iperf3 -J layout, field for field as iperf3 3.12 writes it, so that
// tools that parse iperf3 read wireperf unchanged. wireperf's additions
// sit beside iperf3's keys, never in place of them, and are marked below.

type iperfDocument struct {
	Start     iperfStart      `json:"start"`
	Intervals []iperfInterval `json:"intervals"`
	End       iperfEnd        `json:"end"`
	Title     string          `json:"title,omitempty"` // -T, as iperf3 adds it
	// --extra-data, as iperf3 adds it: on both ends, the client's string.
	ExtraData string `json:"extra_data,omitempty"`
	Error     string `json:"error,omitempty"` // as iperf3 reports a failed test
	// The server's own report (--get-server-output), as iperf3 3.21
	// names it: JSON from a server that writes JSON, text otherwise.
	ServerOutputJSON json.RawMessage `json:"server_output_json,omitempty"`
	ServerOutputText string          `json:"server_output_text,omitempty"`
	Wireperf         *extension      `json:"wireperf,omitempty"`
}

type iperfStart struct {
	Connected     []iperfConnected `json:"connected"`
	Version       string           `json:"version"`
	SystemInfo    string           `json:"system_info"`
	Timestamp     iperfTimestamp   `json:"timestamp"`
	ConnectingTo  iperfHostPort    `json:"connecting_to"`
	Cookie        string           `json:"cookie"`
	TCPMSS        int              `json:"tcp_mss,omitempty"`         // with -M, as iperf3 writes it
	TCPMSSDefault *int             `json:"tcp_mss_default,omitempty"` // TCP only, as in iperf3
	TargetBitrate float64          `json:"target_bitrate"`
	SockBufsize   int64            `json:"sock_bufsize"`
	SndbufActual  int64            `json:"sndbuf_actual"`
	RcvbufActual  int64            `json:"rcvbuf_actual"`
	TestStart     iperfTestStart   `json:"test_start"`
}

type iperfConnected struct {
	Socket     int    `json:"socket"`
	LocalHost  string `json:"local_host"`
	LocalPort  int    `json:"local_port"`
	RemoteHost string `json:"remote_host"`
	RemotePort int    `json:"remote_port"`
}

type iperfTimestamp struct {
	Time     string `json:"time"`
	Timesecs int64  `json:"timesecs"`
}

type iperfHostPort struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

type iperfTestStart struct {
	Protocol      string  `json:"protocol"`
	NumStreams    int     `json:"num_streams"`
	Blksize       int     `json:"blksize"`
	Omit          float64 `json:"omit"`
	Duration      float64 `json:"duration"`
	Bytes         int64   `json:"bytes"`
	Blocks        int64   `json:"blocks"`
	Reverse       int     `json:"reverse"`
	TOS           int     `json:"tos"`
	TargetBitrate float64 `json:"target_bitrate"`
	// Written by iperf3 from 3.13 on; 3.12 leaves it out.
	Bidir    int     `json:"bidir"`
	Interval float64 `json:"interval"`
}

type iperfInterval struct {
	Streams         []iperfIntervalStream `json:"streams"`
	Sum             iperfIntervalSum      `json:"sum"`
	SumBidirReverse *iperfIntervalSum     `json:"sum_bidir_reverse,omitempty"`
	// Tail marks the local end's last row, after its last full interval
	// (wireperf's): the rows and the tail add up to the end's totals.
	Tail bool `json:"tail,omitempty"`
}

// iperfIntervalStream is one stream in one interval from the local end's
// view, as in iperf3.
type iperfIntervalStream struct {
	Socket        int     `json:"socket"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	*iperfTCPSample
	*iperfUDPFigures
	Omitted bool `json:"omitted"`
	Sender  bool `json:"sender"` // the local end sends on this stream
	peerFigures
}

// iperfTCPSample is present on the sending end only, as in iperf3.
type iperfTCPSample struct {
	Retransmits int64  `json:"retransmits"`
	SndCwnd     uint64 `json:"snd_cwnd"`
	SndWnd      uint64 `json:"snd_wnd"`
	RTT         uint32 `json:"rtt"`
	RTTVar      uint32 `json:"rttvar"`
	PMTU        uint32 `json:"pmtu"`
}

// iperfUDPFigures are iperf3's UDP keys of an interval stream or sum, or
// of an end sum, from one end's view. packets is iperf3's count: on the
// sending end the datagrams sent, on the receiving end the datagrams it
// knows were sent (received + lost, iperf3's highest sequence number), so
// that lost_percent = 100 × lost_packets ÷ packets as in iperf3. In an
// interval only the receiving end has jitter_ms, lost_packets and
// lost_percent, as in iperf3; jitter_ms is 0 when unknown, which
// jitter_samples (wireperf's) tells apart from a measured 0.
type iperfUDPFigures struct {
	JitterMs    *float64 `json:"jitter_ms,omitempty"`
	LostPackets *int64   `json:"lost_packets,omitempty"`
	Packets     int64    `json:"packets"`
	LostPercent *float64 `json:"lost_percent,omitempty"`
}

// peerFigures are wireperf's addition: both ends' counts for the interval,
// so the receiver's figure (the goodput) sits beside iperf3's local one.
// A side whose report is missing is left out. In a UDP test each side's
// UDP figures come whole too (summed over flows in a sum).
type peerFigures struct {
	SenderBytes         *int64   `json:"sender_bytes,omitempty"`
	SenderBitsPerSecond *float64 `json:"sender_bits_per_second,omitempty"`
	// Each side's span: its rate is over it, never the other end's.
	SenderStart           *float64 `json:"sender_start,omitempty"`
	SenderEnd             *float64 `json:"sender_end,omitempty"`
	SenderBytesDelivered  *int64   `json:"sender_bytes_delivered,omitempty"`
	ReceiverBytes         *int64   `json:"receiver_bytes,omitempty"`
	ReceiverBitsPerSecond *float64 `json:"receiver_bits_per_second,omitempty"`
	ReceiverStart         *float64 `json:"receiver_start,omitempty"`
	ReceiverEnd           *float64 `json:"receiver_end,omitempty"`
	// The receiver's reads and its unread backlog at the cut, where its
	// bytes are the kernel's count.
	ReceiverAppBytes *int64      `json:"receiver_app_bytes,omitempty"`
	ReceiverBacklog  *int64      `json:"receiver_backlog_bytes,omitempty"`
	SenderUDP        *senderUDP  `json:"sender_udp,omitempty"`
	ReceiverUDP      *result.UDP `json:"receiver_udp,omitempty"` // its sender fields are empty and left out
}

// senderUDP is the sending end's part of result.UDP.
type senderUDP struct {
	Sent        int64           `json:"sent"`
	SendErrors  int64           `json:"send_errors"`
	GSOSegments int             `json:"gso_segments,omitempty"`
	Spacing     *result.Spacing `json:"spacing,omitempty"`
}

// senderPart picks the sender's figures of u; nil stays nil.
func senderPart(u *result.UDP) *senderUDP {
	if u == nil {
		return nil
	}
	return &senderUDP{Sent: u.Sent, SendErrors: u.SendErrors, GSOSegments: u.GSOSegments, Spacing: u.Spacing}
}

type iperfIntervalSum struct {
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   *int64  `json:"retransmits,omitempty"` // sending end only
	*iperfUDPFigures
	Omitted bool `json:"omitted"`
	Sender  bool `json:"sender"`
	peerFigures
}

// iperfEnd is iperf3's end object. For UDP iperf3 also writes "sum" (and
// "sum_bidir_reverse"): the local end's view of a direction with the
// receiver's loss and jitter; and no congestion control.
type iperfEnd struct {
	Streams                 []iperfEndStream `json:"streams"`
	Sum                     *iperfEndSum     `json:"sum,omitempty"` // UDP only
	SumSent                 iperfEndSum      `json:"sum_sent"`
	SumReceived             iperfEndSum      `json:"sum_received"`
	SumBidirReverse         *iperfEndSum     `json:"sum_bidir_reverse,omitempty"` // UDP only
	SumSentBidirReverse     *iperfEndSum     `json:"sum_sent_bidir_reverse,omitempty"`
	SumReceivedBidirReverse *iperfEndSum     `json:"sum_received_bidir_reverse,omitempty"`
	CPU                     iperfCPU         `json:"cpu_utilization_percent"`
	SenderTCPCongestion     *string          `json:"sender_tcp_congestion,omitempty"`   // TCP only
	ReceiverTCPCongestion   *string          `json:"receiver_tcp_congestion,omitempty"` // TCP only
}

// iperfEndStream is one stream's totals: for TCP a sender and a receiver
// object, for UDP one "udp" object, as in iperf3.
type iperfEndStream struct {
	Sender   *iperfEndSender   `json:"sender,omitempty"`
	Receiver *iperfEndReceiver `json:"receiver,omitempty"`
	UDP      *iperfEndUDP      `json:"udp,omitempty"`
}

// iperfEndUDP is a UDP stream's totals from the local end's view: its
// own bytes and packets (as iperfUDPFigures counts them), with the
// receiver's jitter and loss whichever end received.
type iperfEndUDP struct {
	Socket        int     `json:"socket"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	JitterMs      float64 `json:"jitter_ms"`
	LostPackets   int64   `json:"lost_packets"`
	Packets       int64   `json:"packets"`
	LostPercent   float64 `json:"lost_percent"`
	OutOfOrder    int64   `json:"out_of_order"`
	Sender        bool    `json:"sender"` // the local end sends on this stream
	// wireperf's additions.
	*udpReceiveExtras
	*udpSendExtras
	peerFigures
}

// udpReceiveExtras are wireperf's receiver figures beside iperf3's.
type udpReceiveExtras struct {
	OutOfOrder       *int64 `json:"out_of_order,omitempty"` // in sums, where iperf3 has none
	ReceivedPackets  int64  `json:"received_packets"`       // distinct datagrams received
	Duplicates       int64  `json:"duplicates"`
	LatePackets      int64  `json:"late_packets"` // arrived after being counted lost
	ReorderMaxExtent int64  `json:"reorder_max_extent"`
	// JitterSamples is the datagram pairs jitter_ms is made of; 0 means
	// the jitter is unknown and jitter_ms is a placeholder 0.
	JitterSamples int64  `json:"jitter_samples"`
	JitterMethod  string `json:"jitter_method,omitempty"`
}

// udpSendExtras are wireperf's sender figures beside iperf3's.
type udpSendExtras struct {
	SendErrors int64 `json:"send_errors"`
}

type iperfEndSender struct {
	Socket        int     `json:"socket"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   int64   `json:"retransmits"`
	MaxSndCwnd    uint64  `json:"max_snd_cwnd"`
	MaxSndWnd     uint64  `json:"max_snd_wnd"`
	MaxRTT        uint32  `json:"max_rtt"`
	MinRTT        uint32  `json:"min_rtt"`
	MeanRTT       uint32  `json:"mean_rtt"`
	Sender        bool    `json:"sender"` // the local end sends on this stream
}

type iperfEndReceiver struct {
	Socket        int     `json:"socket"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Sender        bool    `json:"sender"`
}

type iperfEndSum struct {
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   *int64  `json:"retransmits,omitempty"` // sum_sent only, TCP only
	*iperfUDPFigures
	Sender bool `json:"sender"`
	// wireperf's additions for UDP.
	*udpReceiveExtras
	*udpSendExtras
}

type iperfCPU struct {
	HostTotal    float64 `json:"host_total"`
	HostUser     float64 `json:"host_user"`
	HostSystem   float64 `json:"host_system"`
	RemoteTotal  float64 `json:"remote_total"`
	RemoteUser   float64 `json:"remote_user"`
	RemoteSystem float64 `json:"remote_system"`
	// wireperf's: each end's process's peak resident memory.
	HostPeakRSSBytes   int64 `json:"host_peak_rss_bytes,omitempty"`
	RemotePeakRSSBytes int64 `json:"remote_peak_rss_bytes,omitempty"`
}
