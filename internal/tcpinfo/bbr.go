package tcpinfo

import "errors"

// ErrNotBBR is returned by GetBBR when the socket's congestion control
// algorithm is not bbr, so there is no BBR state to read.
var ErrNotBBR = errors.New("congestion control algorithm is not bbr")

// BBR is the BBR congestion module's own view (TCP_CC_INFO), present only when the algorithm is bbr.
type BBR struct {
	BandwidthBps uint64 `json:"bw_bytes_per_sec"` // BBR's bottleneck bandwidth estimate
	MinRTTus     uint32 `json:"min_rtt_us"`       // BBR's windowed minimum RTT
	PacingGain   uint32 `json:"pacing_gain"`      // fixed point, 256 = 1.0
	CwndGain     uint32 `json:"cwnd_gain"`        // fixed point, 256 = 1.0
}
