package udpflow

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message of level and type carrying data, padded
// as the kernel pads it.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[cmsgHdrLen:], data)
	return b
}

func timestampCmsg(sec, nsec int64) []byte {
	d := make([]byte, 16)
	binary.NativeEndian.PutUint64(d[0:8], uint64(sec))
	binary.NativeEndian.PutUint64(d[8:16], uint64(nsec))
	return cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, d)
}

func groCmsg(size uint32) []byte {
	d := make([]byte, 4)
	binary.NativeEndian.PutUint32(d, size)
	return cmsg(unix.SOL_UDP, unix.UDP_GRO, d)
}

func ovflCmsg(n uint32) []byte {
	d := make([]byte, 4)
	binary.NativeEndian.PutUint32(d, n)
	return cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, d)
}

func TestParseAncillary(t *testing.T) {
	ts, gro := timestampCmsg(1_700_000_000, 123_456_789), groCmsg(1448)
	const wantNs = 1_700_000_000*1e9 + 123_456_789
	tests := []struct {
		name string
		oob  []byte
		want ancillary
	}{
		{"none", nil, ancillary{}},
		{"timestamp", ts, ancillary{recvNs: wantNs}},
		{"GRO segment size", gro, ancillary{segSize: 1448}},
		{"both", append(append([]byte(nil), ts...), gro...), ancillary{recvNs: wantNs, segSize: 1448}},
		{"both, the other order", append(append([]byte(nil), gro...), ts...), ancillary{recvNs: wantNs, segSize: 1448}},
		// Ours to send, not to receive: not a segment size.
		{"UDP_SEGMENT is not GRO", segmentCmsg(1448), ancillary{}},
		{"socket drops (SO_RXQ_OVFL)", append(append([]byte(nil), ovflCmsg(4321)...), ts...), ancillary{recvNs: wantNs, drops: 4321}},
		{"socket drops too short", cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, make([]byte, 2)), ancillary{}},
		{"unknown message skipped", append(cmsg(unix.SOL_IP, unix.IP_TOS, []byte{1}), gro...), ancillary{segSize: 1448}},
		// Cut short: what is whole is read, the rest ignored.
		{"truncated second message", append(append([]byte(nil), ts...), gro[:cmsgHdrLen+2]...), ancillary{recvNs: wantNs}},
		{"timestamp too short", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, make([]byte, 8)), ancillary{}},
		{"header only", ts[:cmsgHdrLen-1], ancillary{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseAncillary(tc.oob); got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
	// A length field that claims more than there is, or less than a header.
	bad := append([]byte(nil), ts...)
	(*unix.Cmsghdr)(unsafe.Pointer(&bad[0])).SetLen(len(bad) + 64)
	if got := parseAncillary(bad); got != (ancillary{}) {
		t.Errorf("overlong length: %+v", got)
	}
	(*unix.Cmsghdr)(unsafe.Pointer(&bad[0])).SetLen(cmsgHdrLen - 1)
	if got := parseAncillary(bad); got != (ancillary{}) {
		t.Errorf("short length: %+v", got)
	}
}

func TestSegmentCmsg(t *testing.T) {
	b := segmentCmsg(1448)
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	if h.Level != unix.SOL_UDP || h.Type != unix.UDP_SEGMENT || int(h.Len) != unix.CmsgLen(2) {
		t.Fatalf("header %+v", *h)
	}
	if got := binary.NativeEndian.Uint16(b[cmsgHdrLen:]); got != 1448 {
		t.Errorf("segment size %d", got)
	}
}

// FuzzParseAncillary: any bytes, however they claim lengths, are read
// within bounds.
func FuzzParseAncillary(f *testing.F) {
	f.Add(timestampCmsg(1, 2))
	f.Add(append(groCmsg(1200), timestampCmsg(3, 4)...))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 1, 0, 0, 0, 35, 0, 0, 0})
	f.Fuzz(func(t *testing.T, oob []byte) {
		a := make([]byte, len(oob)+8) // the kernel's buffers are word-aligned
		copy(a, oob)
		got := parseAncillary(a[:len(oob)])
		if got.segSize < 0 {
			t.Fatalf("negative segment size %d", got.segSize)
		}
	})
}
