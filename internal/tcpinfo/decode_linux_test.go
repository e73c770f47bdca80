package tcpinfo

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestOffsetsMatchKernelLayout checks our offsets against x/sys's
// cgo-generated copy of struct tcp_info, an independent source.
func TestOffsetsMatchKernelLayout(t *testing.T) {
	var x unix.TCPInfo
	tests := []struct {
		name      string
		ours, ref uintptr
	}{
		{"state", offState, unsafe.Offsetof(x.State)},
		{"ca_state", offCAState, unsafe.Offsetof(x.Ca_state)},
		{"snd_mss", offSndMSS, unsafe.Offsetof(x.Snd_mss)},
		{"rcv_mss", offRcvMSS, unsafe.Offsetof(x.Rcv_mss)},
		{"unacked", offUnacked, unsafe.Offsetof(x.Unacked)},
		{"lost", offLost, unsafe.Offsetof(x.Lost)},
		{"pmtu", offPMTU, unsafe.Offsetof(x.Pmtu)},
		{"rcv_ssthresh", offRcvSsthresh, unsafe.Offsetof(x.Rcv_ssthresh)},
		{"rtt", offRTT, unsafe.Offsetof(x.Rtt)},
		{"rttvar", offRTTVar, unsafe.Offsetof(x.Rttvar)},
		{"snd_ssthresh", offSndSsthresh, unsafe.Offsetof(x.Snd_ssthresh)},
		{"snd_cwnd", offSndCwnd, unsafe.Offsetof(x.Snd_cwnd)},
		{"advmss", offAdvMSS, unsafe.Offsetof(x.Advmss)},
		{"reordering", offReordering, unsafe.Offsetof(x.Reordering)},
		{"rcv_rtt", offRcvRTT, unsafe.Offsetof(x.Rcv_rtt)},
		{"rcv_space", offRcvSpace, unsafe.Offsetof(x.Rcv_space)},
		{"total_retrans", offTotalRetrans, unsafe.Offsetof(x.Total_retrans)},
		{"pacing_rate", offPacingRate, unsafe.Offsetof(x.Pacing_rate)},
		{"bytes_acked", offBytesAcked, unsafe.Offsetof(x.Bytes_acked)},
		{"bytes_received", offBytesReceived, unsafe.Offsetof(x.Bytes_received)},
		{"segs_out", offSegsOut, unsafe.Offsetof(x.Segs_out)},
		{"segs_in", offSegsIn, unsafe.Offsetof(x.Segs_in)},
		{"notsent_bytes", offNotsentBytes, unsafe.Offsetof(x.Notsent_bytes)},
		{"min_rtt", offMinRTT, unsafe.Offsetof(x.Min_rtt)},
		{"last_data_recv", offLastDataRecv, unsafe.Offsetof(x.Last_data_recv)},
		{"data_segs_in", offDataSegsIn, unsafe.Offsetof(x.Data_segs_in)},
		{"rcv_ooopack", offRcvOOOPack, unsafe.Offsetof(x.Rcv_ooopack)},
		{"delivery_rate", offDeliveryRate, unsafe.Offsetof(x.Delivery_rate)},
		{"busy_time", offBusyTime, unsafe.Offsetof(x.Busy_time)},
		{"rwnd_limited", offRwndLimited, unsafe.Offsetof(x.Rwnd_limited)},
		{"sndbuf_limited", offSndbufLimited, unsafe.Offsetof(x.Sndbuf_limited)},
		{"bytes_sent", offBytesSent, unsafe.Offsetof(x.Bytes_sent)},
		{"bytes_retrans", offBytesRetrans, unsafe.Offsetof(x.Bytes_retrans)},
		{"snd_wnd", offSndWnd, unsafe.Offsetof(x.Snd_wnd)},
		{"rcv_wnd", offRcvWnd, unsafe.Offsetof(x.Rcv_wnd)},
	}
	for _, tt := range tests {
		if tt.ours != tt.ref {
			t.Errorf("%s at %d, x/sys says %d", tt.name, tt.ours, tt.ref)
		}
	}
	// x/sys names the six u8s before the bit-field bytes and then rto; the
	// two bytes between them are the bit-fields we read by hand.
	if got := unsafe.Offsetof(x.Options); got+2 != offAppLimited {
		t.Errorf("options at %d, so the app-limited byte is not at %d", got, offAppLimited)
	}
	if got := unsafe.Offsetof(x.Rto); got != offAppLimited+1 {
		t.Errorf("rto at %d, want right after the app-limited byte (%d)", got, offAppLimited+1)
	}
}

// filled returns an infoLen buffer where each field holds a distinct value.
func filled() []byte {
	b := make([]byte, infoLen)
	put32 := func(off int, v uint32) { binary.NativeEndian.PutUint32(b[off:], v) }
	put64 := func(off int, v uint64) { binary.NativeEndian.PutUint64(b[off:], v) }
	b[offState], b[offCAState] = 1, 4
	put32(offSndMSS, 1448)
	put32(offRTT, 250)
	put32(offSndCwnd, 10)
	put32(offMinRTT, 12)
	put32(offTotalRetrans, 3)
	put64(offPacingRate, 1<<40+1)
	put64(offBytesAcked, 1<<33+5)
	put64(offBusyTime, 1000)
	put64(offRwndLimited, 200)
	put64(offSndbufLimited, 300)
	put32(offRcvWnd, 65535)
	return b
}

func TestDecodeInfo(t *testing.T) {
	full := filled()
	tests := []struct {
		name  string
		raw   []byte
		check func(*Info) bool
	}{
		{"state", full, func(i *Info) bool { return i.State == 1 && i.CAState == 4 }},
		{"u32 fields", full, func(i *Info) bool {
			return i.SndMSS == 1448 && i.RTTus == 250 && i.SndCwnd == 10 && i.MinRTTus == 12 && i.TotalRetrans == 3
		}},
		{"u64 fields", full, func(i *Info) bool {
			return i.PacingRate == 1<<40+1 && i.BytesAcked == 1<<33+5 && i.BusyTimeus == 1000 &&
				i.RwndLimitedus == 200 && i.SndbufLimitedus == 300
		}},
		{"last field", full, func(i *Info) bool { return i.RcvWnd == 65535 }},
		{"cwnd bytes", full, func(i *Info) bool { return i.CwndBytes() == 14480 }},
		// A pre-4.x kernel stops after total_retrans: later fields read zero.
		{"truncated", full[:minInfoLen], func(i *Info) bool {
			return i.SndMSS == 1448 && i.TotalRetrans == 3 && i.PacingRate == 0 && i.BytesAcked == 0 && i.RcvWnd == 0
		}},
		// A field cut in half must read zero, not a partial value.
		{"split field", full[:offBytesAcked+4], func(i *Info) bool { return i.BytesAcked == 0 && i.PacingRate == 1<<40+1 }},
		{"empty", nil, func(i *Info) bool { return *i == Info{} }},
	}
	for _, tt := range tests {
		var info Info
		decodeInfo(tt.raw, &info)
		if !tt.check(&info) {
			t.Errorf("%s: decoded %+v", tt.name, info)
		}
	}
}

func TestDecodeAppLimited(t *testing.T) {
	if appLimitedMask != 0x01 {
		t.Skip("table written for little-endian bit-field order")
	}
	tests := []struct {
		b    byte
		want bool
	}{
		{0x00, false},
		{0x01, true},
		{0x06, false}, // fastopen_client_fail only
		{0x07, true},
		{0xf8, false}, // unused high bits
	}
	for _, tt := range tests {
		raw := make([]byte, infoLen)
		raw[offAppLimited] = tt.b
		raw[offAppLimited-1] = 0xff // snd/rcv_wscale must not leak in
		var info Info
		decodeInfo(raw, &info)
		if info.AppLimited != tt.want {
			t.Errorf("byte %#02x: AppLimited = %v, want %v", tt.b, info.AppLimited, tt.want)
		}
	}
}

// FuzzDecodeInfo checks decodeInfo never panics and that a short buffer
// reads like the same bytes zero-extended (what the kernel's shorter
// struct means), except that a field cut short reads zero.
func FuzzDecodeInfo(f *testing.F) {
	f.Add(filled())
	f.Add([]byte{1})
	f.Add(bytes.Repeat([]byte{0xff}, infoLen+10))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got, want Info
		decodeInfo(raw, &got)
		padded := make([]byte, max(len(raw), infoLen))
		copy(padded, raw)
		decodeInfo(padded, &want)
		g, w := reflect.ValueOf(got), reflect.ValueOf(want)
		for i := range g.NumField() {
			if !g.Field(i).IsZero() && !g.Field(i).Equal(w.Field(i)) {
				t.Fatalf("%s: short buffer gives %v, zero-extended %v",
					g.Type().Field(i).Name, g.Field(i), w.Field(i))
			}
		}
		if len(raw) >= infoLen && got != want {
			t.Fatalf("full buffer decoded differently: %+v vs %+v", got, want)
		}
	})
}
