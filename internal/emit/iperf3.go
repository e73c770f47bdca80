package emit

// The iperf3 -J layout, field for field as iperf3 3.12 writes it, so that
// tools that parse iperf3 read wireperf unchanged. wireperf's additions
// sit beside iperf3's keys, never in place of them, and are marked below.

type iperfDocument struct {
	Start     iperfStart      `json:"start"`
	Intervals []iperfInterval `json:"intervals"`
	End       iperfEnd        `json:"end"`
	Title     string          `json:"title,omitempty"` // -T, as iperf3 adds it
	Error     string          `json:"error,omitempty"` // as iperf3 reports a failed test
	Wireperf  *extension      `json:"wireperf,omitempty"`
}

type iperfStart struct {
	Connected     []iperfConnected `json:"connected"`
	Version       string           `json:"version"`
	SystemInfo    string           `json:"system_info"`
	Timestamp     iperfTimestamp   `json:"timestamp"`
	ConnectingTo  iperfHostPort    `json:"connecting_to"`
	Cookie        string           `json:"cookie"`
	TCPMSS        int              `json:"tcp_mss,omitempty"` // with -M, as iperf3 writes it
	TCPMSSDefault int              `json:"tcp_mss_default"`
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

// peerFigures are wireperf's addition: both ends' counts for the interval,
// so the receiver's figure (the goodput) sits beside iperf3's local one.
// A side whose report is missing is left out.
type peerFigures struct {
	SenderBytes           *int64   `json:"sender_bytes,omitempty"`
	SenderBitsPerSecond   *float64 `json:"sender_bits_per_second,omitempty"`
	ReceiverBytes         *int64   `json:"receiver_bytes,omitempty"`
	ReceiverBitsPerSecond *float64 `json:"receiver_bits_per_second,omitempty"`
}

type iperfIntervalSum struct {
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   *int64  `json:"retransmits,omitempty"` // sending end only
	Omitted       bool    `json:"omitted"`
	Sender        bool    `json:"sender"`
	peerFigures
}

type iperfEnd struct {
	Streams                 []iperfEndStream `json:"streams"`
	SumSent                 iperfEndSum      `json:"sum_sent"`
	SumReceived             iperfEndSum      `json:"sum_received"`
	SumSentBidirReverse     *iperfEndSum     `json:"sum_sent_bidir_reverse,omitempty"`
	SumReceivedBidirReverse *iperfEndSum     `json:"sum_received_bidir_reverse,omitempty"`
	CPU                     iperfCPU         `json:"cpu_utilization_percent"`
	SenderTCPCongestion     string           `json:"sender_tcp_congestion"`
	ReceiverTCPCongestion   string           `json:"receiver_tcp_congestion"`
}

type iperfEndStream struct {
	Sender   iperfEndSender   `json:"sender"`
	Receiver iperfEndReceiver `json:"receiver"`
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
	Retransmits   *int64  `json:"retransmits,omitempty"` // sum_sent only
	Sender        bool    `json:"sender"`
}

type iperfCPU struct {
	HostTotal    float64 `json:"host_total"`
	HostUser     float64 `json:"host_user"`
	HostSystem   float64 `json:"host_system"`
	RemoteTotal  float64 `json:"remote_total"`
	RemoteUser   float64 `json:"remote_user"`
	RemoteSystem float64 `json:"remote_system"`
}
