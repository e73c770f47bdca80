package tcpinfo

import "encoding/binary"

// Byte offsets of the fields we read in the kernel's struct tcp_info
// (include/uapi/linux/tcp.h). The layout is append-only, so an older
// kernel returns a prefix and the fields past it read as zero.
const (
	offState         = 0
	offCAState       = 1
	offAppLimited    = 7 // delivery_rate_app_limited:1, fastopen_client_fail:2
	offSndMSS        = 16
	offRcvMSS        = 20
	offUnacked       = 24
	offLost          = 32
	offLastDataRecv  = 52
	offPMTU          = 60
	offRcvSsthresh   = 64
	offRTT           = 68
	offRTTVar        = 72
	offSndSsthresh   = 76
	offSndCwnd       = 80
	offAdvMSS        = 84
	offReordering    = 88
	offRcvRTT        = 92
	offRcvSpace      = 96
	offTotalRetrans  = 100
	offPacingRate    = 104
	offBytesAcked    = 120
	offBytesReceived = 128
	offSegsOut       = 136
	offSegsIn        = 140
	offNotsentBytes  = 144
	offMinRTT        = 148
	offDataSegsIn    = 152
	offDeliveryRate  = 160
	offBusyTime      = 168
	offRwndLimited   = 176
	offSndbufLimited = 184
	offBytesSent     = 200
	offBytesRetrans  = 208
	offRcvOOOPack    = 224
	offSndWnd        = 228
	offRcvWnd        = 232

	// infoLen is how much of tcp_info we ask for: up to the end of rcv_wnd.
	// Asking for less than the whole struct keeps the copy small.
	infoLen = offRcvWnd + 4
	// minInfoLen is the size of tcp_info before Linux 3.15 added
	// pacing_rate; anything shorter is not a tcp_info at all.
	minInfoLen = offPacingRate
)

// appLimitedMask selects delivery_rate_app_limited in its byte: C
// bit-fields fill from the least significant bit on little-endian ABIs and
// from the most significant on big-endian ones.
var appLimitedMask = func() byte {
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		return 0x80
	}
	return 0x01
}()

// tcpInfoBytes is a kernel tcp_info in native byte order, possibly
// truncated. Every read checks bounds and yields zero past the end.
type tcpInfoBytes []byte

func (b tcpInfoBytes) u8(off int) uint8 {
	if off < 0 || off >= len(b) {
		return 0
	}
	return b[off]
}

func (b tcpInfoBytes) u32(off int) uint32 {
	if off < 0 || off+4 > len(b) {
		return 0
	}
	return binary.NativeEndian.Uint32(b[off : off+4])
}

func (b tcpInfoBytes) u64(off int) uint64 {
	if off < 0 || off+8 > len(b) {
		return 0
	}
	return binary.NativeEndian.Uint64(b[off : off+8])
}

// decodeInfo fills an Info from the bytes getsockopt(TCP_INFO) returned.
func decodeInfo(raw []byte, info *Info) {
	b := tcpInfoBytes(raw)
	*info = Info{
		State:           b.u8(offState),
		CAState:         b.u8(offCAState),
		RTTus:           b.u32(offRTT),
		RTTVarus:        b.u32(offRTTVar),
		MinRTTus:        b.u32(offMinRTT),
		SndMSS:          b.u32(offSndMSS),
		RcvMSS:          b.u32(offRcvMSS),
		AdvMSS:          b.u32(offAdvMSS),
		PMTU:            b.u32(offPMTU),
		SndCwnd:         b.u32(offSndCwnd),
		SndSsthresh:     b.u32(offSndSsthresh),
		Unacked:         b.u32(offUnacked),
		Lost:            b.u32(offLost),
		LastDataRecvms:  b.u32(offLastDataRecv),
		TotalRetrans:    b.u32(offTotalRetrans),
		Reordering:      b.u32(offReordering),
		RcvSpace:        b.u32(offRcvSpace),
		RcvSsthresh:     b.u32(offRcvSsthresh),
		RcvRTTus:        b.u32(offRcvRTT),
		RcvOOOPack:      b.u32(offRcvOOOPack),
		SndWnd:          b.u32(offSndWnd),
		RcvWnd:          b.u32(offRcvWnd),
		NotsentBytes:    b.u32(offNotsentBytes),
		PacingRate:      b.u64(offPacingRate),
		DeliveryRate:    b.u64(offDeliveryRate),
		AppLimited:      b.u8(offAppLimited)&appLimitedMask != 0,
		BytesSent:       b.u64(offBytesSent),
		BytesAcked:      b.u64(offBytesAcked),
		BytesReceived:   b.u64(offBytesReceived),
		BytesRetrans:    b.u64(offBytesRetrans),
		SegsOut:         b.u32(offSegsOut),
		SegsIn:          b.u32(offSegsIn),
		DataSegsIn:      b.u32(offDataSegsIn),
		BusyTimeus:      b.u64(offBusyTime),
		RwndLimitedus:   b.u64(offRwndLimited),
		SndbufLimitedus: b.u64(offSndbufLimited),
	}
}
