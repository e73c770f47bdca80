package iperf3

import (
	"encoding/binary"
	"errors"
	"time"
)

// UDP stream set-up. The iperf3 client sends a 4-byte datagram to the
// server's port and waits for a 4-byte answer on the same socket. iperf3
// writes the two values as host-order C ints: UDP_CONNECT_MSG 0x36373839
// and UDP_CONNECT_REPLY 0x39383736. On the little-endian machines nearly
// everyone runs, the bytes on the wire are therefore "9876" (client) and
// "6789" (server) — that is what iperf3 3.12 on amd64 was observed to
// send. Versions before 3.11 used 123456789 and 987654321 the same way.
// We send what a little-endian iperf3 sends and accept any of these in
// either byte order (so "6789" is also a big-endian client's message:
// the two values are each other byte-swapped, and only the direction of
// a datagram tells message from reply).
var (
	UDPConnectMsg   = [4]byte{'9', '8', '7', '6'}
	UDPConnectReply = [4]byte{'6', '7', '8', '9'}
)

const (
	connectMsgValue         = 0x36373839
	connectReplyValue       = 0x39383736
	legacyConnectMsgValue   = 123456789
	legacyConnectReplyValue = 987654321
)

func fourBytesAre(b []byte, values ...uint32) bool {
	if len(b) != 4 {
		return false
	}
	le, be := binary.LittleEndian.Uint32(b), binary.BigEndian.Uint32(b)
	for _, v := range values {
		if le == v || be == v {
			return true
		}
	}
	return false
}

// IsUDPConnect reports whether a datagram is an iperf3 client's UDP
// stream set-up message.
func IsUDPConnect(b []byte) bool {
	return fourBytesAre(b, connectMsgValue, legacyConnectMsgValue)
}

// IsUDPConnectReply reports whether a datagram is an iperf3 server's
// answer to the set-up message.
func IsUDPConnectReply(b []byte) bool {
	return fourBytesAre(b, connectReplyValue, legacyConnectReplyValue)
}

// UDP datagram header: the send time as seconds and microseconds (each a
// big-endian u32; iperf3 3.12 uses its monotonic clock, so only
// differences mean anything), then the sequence number from 1, a
// big-endian u32, or a u64 when the test asked for udp_counters_64bit.
const (
	UDPHeaderLen   = 12
	UDPHeaderLen64 = 16
)

// UDPHeader is the front of every iperf3 UDP datagram.
type UDPHeader struct {
	Sec, Usec uint32
	Seq       uint64
}

// ErrShortDatagram is a datagram too short for its header.
var ErrShortDatagram = errors.New("iperf3: UDP datagram shorter than its header")

// HeaderLen is the header size for the counter width.
func HeaderLen(counters64 bool) int {
	if counters64 {
		return UDPHeaderLen64
	}
	return UDPHeaderLen
}

// PutUDPHeader writes h into the front of b, which must hold HeaderLen.
func PutUDPHeader(b []byte, h UDPHeader, counters64 bool) {
	binary.BigEndian.PutUint32(b[0:4], h.Sec)
	binary.BigEndian.PutUint32(b[4:8], h.Usec)
	if counters64 {
		binary.BigEndian.PutUint64(b[8:16], h.Seq)
	} else {
		binary.BigEndian.PutUint32(b[8:12], uint32(h.Seq))
	}
}

// ParseUDPHeader reads the header of a datagram.
func ParseUDPHeader(b []byte, counters64 bool) (UDPHeader, error) {
	if len(b) < HeaderLen(counters64) {
		return UDPHeader{}, ErrShortDatagram
	}
	h := UDPHeader{Sec: binary.BigEndian.Uint32(b[0:4]), Usec: binary.BigEndian.Uint32(b[4:8])}
	if counters64 {
		h.Seq = binary.BigEndian.Uint64(b[8:16])
	} else {
		h.Seq = uint64(binary.BigEndian.Uint32(b[8:12]))
	}
	return h, nil
}

// HeaderTime is a send time as a header carries it.
func HeaderTime(t time.Time) (sec, usec uint32) {
	ns := t.UnixNano()
	return uint32(ns / 1e9), uint32(ns % 1e9 / 1e3)
}

// Nanos is the header's send time in ns on the sender's clock (modulo
// 2^32 s; only differences are used).
func (h UDPHeader) Nanos() int64 { return int64(h.Sec)*1e9 + int64(h.Usec)*1e3 }
