package tcpinfo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// Byte offsets in the kernel's struct mptcp_info
// (include/uapi/linux/mptcp.h). Like tcp_info it only grows: an older
// kernel returns a prefix (48 bytes before 6.9's counters), and the fields
// past it read as zero.
const (
	offMPSubflows        = 0
	offMPAddAddrSignal   = 1
	offMPAddAddrAccepted = 2
	offMPSubflowsMax     = 3
	offMPFlags           = 8
	offMPCsumEnabled     = 42
	offMPRetransmits     = 44
	offMPBytesRetrans    = 48
	offMPBytesSent       = 56
	offMPBytesReceived   = 64
	offMPBytesAcked      = 72
	offMPSubflowsTotal   = 80

	// mptcpInfoLen is how much of mptcp_info we ask for: up to
	// subflows_total and its padding.
	mptcpInfoLen = 84
	// mpFlagFallback is MPTCP_INFO_FLAG_FALLBACK.
	mpFlagFallback = 1 << 0

	// subflowDataLen is struct mptcp_subflow_data, the header of the
	// answers to MPTCP_TCPINFO and MPTCP_SUBFLOW_ADDRS.
	subflowDataLen = 16
	// subflowAddrsLen is struct mptcp_subflow_addrs: two
	// sockaddr_storage, the local address then the remote one.
	subflowAddrsLen = 256
	sockaddrLen     = 128
	// maxSubflows bounds the subflows we ask about; the kernel's own
	// limit (`ip mptcp limits`) is 8.
	maxSubflows = 16
)

// decodeMPTCPInfo fills m's connection figures from the bytes
// getsockopt(MPTCP_INFO) returned, short or not.
func decodeMPTCPInfo(raw []byte, m *MPTCP) {
	b := tcpInfoBytes(raw)
	m.Fallback = b.u32(offMPFlags)&mpFlagFallback != 0
	m.SubflowCount = int(b.u8(offMPSubflows)) + 1 // mptcpi_subflows leaves out the initial one
	if total := b.u8(offMPSubflowsTotal); total > 0 {
		m.SubflowCount = int(total)
	}
	m.SubflowsMax = int(b.u8(offMPSubflowsMax))
	m.AddAddrSignal = int(b.u8(offMPAddAddrSignal))
	m.AddAddrAccepted = int(b.u8(offMPAddAddrAccepted))
	m.ChecksumEnabled = b.u8(offMPCsumEnabled) != 0
	m.Retransmits = b.u32(offMPRetransmits)
	m.BytesRetrans = b.u64(offMPBytesRetrans)
	m.BytesSent = b.u64(offMPBytesSent)
	m.BytesReceived = b.u64(offMPBytesReceived)
	m.BytesAcked = b.u64(offMPBytesAcked)
}

// subflowRequest is the header that asks for up to maxSubflows elements
// of elemLen bytes each, with room for them after it.
func subflowRequest(elemLen int) []byte {
	buf := make([]byte, subflowDataLen+maxSubflows*elemLen)
	binary.NativeEndian.PutUint32(buf[0:], subflowDataLen)
	binary.NativeEndian.PutUint32(buf[12:], uint32(elemLen))
	return buf
}

var errSubflowData = errors.New("malformed mptcp_subflow_data")

// subflowElements splits the kernel's answer to MPTCP_TCPINFO or
// MPTCP_SUBFLOW_ADDRS: a struct mptcp_subflow_data (its own size, the
// subflows the kernel counted, the element's size in the kernel and the
// size it used for each element), then the elements. It returns the
// kernel's count and the elements present, each exactly as long as the
// kernel's stride; a header that contradicts itself is an error.
func subflowElements(raw []byte) (int, [][]byte, error) {
	b := tcpInfoBytes(raw)
	if len(raw) < subflowDataLen {
		return 0, nil, fmt.Errorf("%w: %d bytes", errSubflowData, len(raw))
	}
	hdr, count, stride := int64(b.u32(0)), int64(b.u32(4)), int64(b.u32(12))
	if hdr < subflowDataLen || hdr > int64(len(raw)) {
		return 0, nil, fmt.Errorf("%w: header of %d bytes in %d", errSubflowData, hdr, len(raw))
	}
	if count > 255 { // a connection has at most 255 subflows (u8 counters)
		return 0, nil, fmt.Errorf("%w: %d subflows", errSubflowData, count)
	}
	if stride == 0 {
		return int(count), nil, nil
	}
	var elems [][]byte
	for off := hdr; off+stride <= int64(len(raw)) && int64(len(elems)) < count; off += stride {
		elems = append(elems, raw[off:off+stride])
	}
	return int(count), elems, nil
}

// decodeSubflowInfos is the subflows' TCP_INFO from MPTCP_TCPINFO's answer.
func decodeSubflowInfos(raw []byte) (int, []Info, error) {
	count, elems, err := subflowElements(raw)
	if err != nil {
		return 0, nil, err
	}
	infos := make([]Info, len(elems))
	for i, e := range elems {
		decodeInfo(e, &infos[i])
	}
	return count, infos, nil
}

// decodeSubflowAddrs is the subflows' local and remote addresses from
// MPTCP_SUBFLOW_ADDRS's answer.
func decodeSubflowAddrs(raw []byte) ([][2]string, error) {
	_, elems, err := subflowElements(raw)
	if err != nil {
		return nil, err
	}
	addrs := make([][2]string, len(elems))
	for i, e := range elems {
		if len(e) < subflowAddrsLen {
			continue // not an mptcp_subflow_addrs: no addresses rather than wrong ones
		}
		addrs[i] = [2]string{sockaddrString(e[:sockaddrLen]), sockaddrString(e[sockaddrLen:subflowAddrsLen])}
	}
	return addrs, nil
}

// sockaddrString is a sockaddr_in or sockaddr_in6 as "ip:port"; "" for
// another family or a buffer too short for its family.
func sockaddrString(b []byte) string {
	if len(b) < 2 {
		return ""
	}
	const afInet, afInet6 = 2, 10
	switch binary.NativeEndian.Uint16(b) {
	case afInet:
		if len(b) < 8 {
			return ""
		}
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4])).String()
	case afInet6:
		if len(b) < 28 {
			return ""
		}
		ip := netip.AddrFrom16([16]byte(b[8:24])).Unmap() // a dual-stack socket maps IPv4 in
		if scope := binary.NativeEndian.Uint32(b[24:28]); scope != 0 && ip.IsLinkLocalUnicast() {
			ip = ip.WithZone(strconv.FormatUint(uint64(scope), 10))
		}
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4])).String()
	}
	return ""
}
