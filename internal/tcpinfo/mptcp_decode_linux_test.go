package tcpinfo

import (
	"encoding/binary"
	"errors"
	"testing"
)

// mptcpInfoBytes is an mptcp_info of Linux 6.9 on with the given counts.
func mptcpInfoBytes(subflows, total uint8, flags uint32, sent, received uint64) []byte {
	b := make([]byte, 96)
	b[offMPSubflows], b[offMPSubflowsTotal], b[offMPSubflowsMax] = subflows, total, 8
	binary.NativeEndian.PutUint32(b[offMPFlags:], flags)
	binary.NativeEndian.PutUint64(b[offMPBytesSent:], sent)
	binary.NativeEndian.PutUint64(b[offMPBytesReceived:], received)
	binary.NativeEndian.PutUint32(b[offMPRetransmits:], 7)
	return b
}

func TestDecodeMPTCPInfo(t *testing.T) {
	var m MPTCP
	decodeMPTCPInfo(mptcpInfoBytes(1, 2, 0, 5000, 6000), &m)
	if m.Fallback || m.SubflowCount != 2 || m.SubflowsMax != 8 || m.BytesSent != 5000 || m.BytesReceived != 6000 || m.Retransmits != 7 {
		t.Errorf("6.9's mptcp_info: %+v", m)
	}
	// Before 6.9 (48 bytes), no subflows_total: the additional subflows
	// and the initial one.
	m = MPTCP{}
	decodeMPTCPInfo(mptcpInfoBytes(1, 2, 0, 5000, 6000)[:48], &m)
	if m.SubflowCount != 2 || m.BytesSent != 0 || m.Retransmits != 7 {
		t.Errorf("5.16's mptcp_info: %+v; want 2 subflows and no byte counts", m)
	}
	m = MPTCP{}
	decodeMPTCPInfo(mptcpInfoBytes(0, 1, mpFlagFallback, 0, 0), &m)
	if !m.Fallback {
		t.Errorf("MPTCP_INFO_FLAG_FALLBACK not read: %+v", m)
	}
}

// subflowAnswer is the kernel's answer to a subflow option: the header
// with count and stride, then the elements.
func subflowAnswer(count, stride uint32, elems ...[]byte) []byte {
	b := make([]byte, subflowDataLen)
	binary.NativeEndian.PutUint32(b[0:], subflowDataLen)
	binary.NativeEndian.PutUint32(b[4:], count)
	binary.NativeEndian.PutUint32(b[8:], stride)
	binary.NativeEndian.PutUint32(b[12:], stride)
	for _, e := range elems {
		b = append(b, e...)
	}
	return b
}

func sockaddr4(ip [4]byte, port uint16) []byte {
	b := make([]byte, sockaddrLen)
	binary.NativeEndian.PutUint16(b, 2)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:], ip[:])
	return b
}

func sockaddr6(ip [16]byte, port uint16, scope uint32) []byte {
	b := make([]byte, sockaddrLen)
	binary.NativeEndian.PutUint16(b, 10)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[8:], ip[:])
	binary.NativeEndian.PutUint32(b[24:], scope)
	return b
}

func TestDecodeSubflows(t *testing.T) {
	one, two := make([]byte, infoLen), make([]byte, infoLen)
	binary.NativeEndian.PutUint64(one[offBytesSent:], 100)
	binary.NativeEndian.PutUint64(two[offBytesSent:], 200)
	binary.NativeEndian.PutUint32(two[offRTT:], 1500)
	count, infos, err := decodeSubflowInfos(subflowAnswer(3, infoLen, one, two))
	if err != nil || count != 3 || len(infos) != 2 || infos[0].BytesSent != 100 || infos[1].BytesSent != 200 || infos[1].RTTus != 1500 {
		t.Errorf("two of three subflows: %d, %+v, %v", count, infos, err)
	}
	// An older kernel's tcp_info is shorter: its stride, not ours.
	short := one[:minInfoLen]
	if _, infos, err := decodeSubflowInfos(subflowAnswer(2, minInfoLen, short, short)); err != nil || len(infos) != 2 {
		t.Errorf("short tcp_info stride: %d subflows, %v", len(infos), err)
	}

	v6 := [16]byte{0xfe, 0x80, 15: 1}
	addrs, err := decodeSubflowAddrs(subflowAnswer(2, subflowAddrsLen,
		append(sockaddr4([4]byte{10, 0, 1, 1}, 5201), sockaddr4([4]byte{10, 0, 1, 2}, 40000)...),
		append(sockaddr6(v6, 5201, 3), make([]byte, sockaddrLen)...)))
	if err != nil || len(addrs) != 2 {
		t.Fatalf("addresses: %v, %v", addrs, err)
	}
	if want := [2]string{"10.0.1.1:5201", "10.0.1.2:40000"}; addrs[0] != want {
		t.Errorf("IPv4 subflow: %v, want %v", addrs[0], want)
	}
	if want := [2]string{"[fe80::1%3]:5201", ""}; addrs[1] != want {
		t.Errorf("IPv6 subflow, unknown remote family: %v, want %v", addrs[1], want)
	}
}

func TestSubflowElementsRefusesBadHeaders(t *testing.T) {
	bad := map[string][]byte{
		"short":            make([]byte, 8),
		"header too short": subflowAnswer(1, 4)[:subflowDataLen],
		"header too long":  func() []byte { b := subflowAnswer(0, 4); binary.NativeEndian.PutUint32(b, 1<<31); return b }(),
		"256 subflows":     subflowAnswer(256, 4),
	}
	bad["header too short"] = func() []byte { b := subflowAnswer(1, 4); binary.NativeEndian.PutUint32(b, 8); return b }()
	for name, raw := range bad {
		if _, _, err := subflowElements(raw); !errors.Is(err, errSubflowData) {
			t.Errorf("%s: %v, want errSubflowData", name, err)
		}
	}
	// More elements than the count: only the count's.
	if _, elems, err := subflowElements(subflowAnswer(1, 4, make([]byte, 12))); err != nil || len(elems) != 1 {
		t.Errorf("count 1, room for 3: %d elements, %v", len(elems), err)
	}
}

// FuzzDecodeMPTCP feeds the three decoders whatever bytes: none panics,
// every element lies inside the buffer, and no more elements come out
// than the kernel counted.
func FuzzDecodeMPTCP(f *testing.F) {
	f.Add(mptcpInfoBytes(1, 2, 0, 1, 2))
	f.Add(subflowAnswer(2, infoLen, make([]byte, 2*infoLen)))
	f.Add(subflowAnswer(1, subflowAddrsLen, append(sockaddr4([4]byte{127, 0, 0, 1}, 1), sockaddr6([16]byte{15: 1}, 2, 0)...)))
	f.Add(subflowAnswer(5, 0))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m MPTCP
		decodeMPTCPInfo(raw, &m)
		count, elems, err := subflowElements(raw)
		if err == nil && len(elems) > count {
			t.Fatalf("%d elements of %d counted", len(elems), count)
		}
		_, _, _ = decodeSubflowInfos(raw)
		if addrs, err := decodeSubflowAddrs(raw); err == nil && len(addrs) != len(elems) {
			t.Fatalf("%d addresses for %d elements", len(addrs), len(elems))
		}
		_ = sockaddrString(raw)
	})
}
