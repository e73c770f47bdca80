package udpflow

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The ancillary data of one received message: the kernel's receive time,
// under GRO the segment size, and with SO_RXQ_OVFL the socket's drop count
// when the message was queued. Walked by hand, without allocating, since
// it runs for every batch.
type ancillary struct {
	recvNs  int64
	segSize int
	drops   uint32 // the socket's cumulative drops (SO_RXQ_OVFL); 0 when not sent
}

var cmsgHdrLen = unix.CmsgLen(0)

func parseAncillary(oob []byte) ancillary {
	var a ancillary
	for len(oob) >= cmsgHdrLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < cmsgHdrLen || l > len(oob) {
			return a
		}
		data := oob[cmsgHdrLen:l]
		switch {
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= 16:
			sec := int64(binary.NativeEndian.Uint64(data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(data[8:16]))
			a.recvNs = sec*1e9 + nsec
		case h.Level == unix.SOL_UDP && h.Type == unix.UDP_GRO && len(data) >= 4:
			a.segSize = int(binary.NativeEndian.Uint32(data[0:4]))
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_RXQ_OVFL && len(data) >= 4:
			a.drops = binary.NativeEndian.Uint32(data[0:4])
		}
		next := cmsgAlign(l)
		if next > len(oob) {
			return a
		}
		oob = oob[next:]
	}
	return a
}

func cmsgAlign(n int) int {
	const align = int(unsafe.Sizeof(uintptr(0)))
	return (n + align - 1) &^ (align - 1)
}

// segmentCmsg is the UDP_SEGMENT control message that asks the kernel to
// cut one send into datagrams of size bytes (GSO).
func segmentCmsg(size int) []byte {
	b := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level = unix.SOL_UDP
	h.Type = unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	binary.NativeEndian.PutUint16(b[cmsgHdrLen:], uint16(size))
	return b
}
