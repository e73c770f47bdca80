package tcpinfo

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// bbrInfoLen is sizeof(struct tcp_bbr_info): five u32s, bbr_bw_lo,
// bbr_bw_hi, bbr_min_rtt, bbr_pacing_gain, bbr_cwnd_gain.
const bbrInfoLen = 20

// GetBBR returns BBR's state, or an error wrapping ErrNotBBR when the
// socket uses another algorithm (whose TCP_CC_INFO has another layout).
func GetBBR(c syscall.RawConn) (*BBR, error) {
	var (
		cc   string
		buf  [bbrInfoLen]byte
		n    int
		gerr error
	)
	if err := c.Control(func(fd uintptr) {
		cc, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		if gerr != nil || cc != "bbr" {
			return
		}
		n, gerr = getsockopt(int(fd), unix.IPPROTO_TCP, unix.TCP_CC_INFO, buf[:])
	}); err != nil {
		return nil, err
	}
	if gerr != nil {
		return nil, fmt.Errorf("reading BBR state: %w", gerr)
	}
	if cc != "bbr" {
		return nil, fmt.Errorf("%w (it is %q)", ErrNotBBR, cc)
	}
	return decodeBBR(buf[:n])
}

// decodeBBR decodes struct tcp_bbr_info. A short buffer means the module
// reported something else (the algorithm changed under us), so it is an error.
func decodeBBR(b []byte) (*BBR, error) {
	if len(b) < bbrInfoLen {
		return nil, fmt.Errorf("TCP_CC_INFO returned %d bytes, want %d for tcp_bbr_info", len(b), bbrInfoLen)
	}
	u32 := func(i int) uint32 { return binary.NativeEndian.Uint32(b[4*i : 4*i+4]) }
	return &BBR{
		BandwidthBps: uint64(u32(1))<<32 | uint64(u32(0)),
		MinRTTus:     u32(2),
		PacingGain:   u32(3),
		CwndGain:     u32(4),
	}, nil
}
