// Package rr is the data plane of request-response (latency) tests: the
// message format, the server's reflector and the client's prober, and the
// latency statistics (docs/metrics.md, "Request-response (latency)").
//
// A transaction is one request from the client and one response from the
// server. The client stamps T1 as it sends; the server stamps T2 as the
// request arrives (the kernel's receive time where the platform gives it)
// and T3 as it answers; the client stamps T4 as the response arrives. The
// RTT is T4 − T1, the server's time T3 − T2, the network RTT the
// difference, and with an estimate of the clock offset, T2 − T1 and
// T4 − T3 are the one-way delays.
//
// The control session (parameter exchange, start, stop and reports) is
// internal/rr/rrcontrol's, on a control connection internal/control
// sets up; this package moves the messages and measures.
package rr

import (
	"encoding/binary"
	"errors"
)

// HeaderLen is the size of the header that starts every message; it is
// also the smallest message (spec.RRMinSize).
const HeaderLen = 48

// Message header layout (big-endian):
//
//	0  magic "WR"            2 bytes
//	2  version               1 byte
//	3  kind                  1 byte: 1 request, 2 response
//	4  length                4 bytes: this message, header included
//	8  response length       4 bytes: what a request asks back; 0 in a response
//	12 reserved              4 bytes, 0
//	16 sequence number       8 bytes, from 0
//	24 T1                    8 bytes: client's send time, ns since the Unix epoch
//	32 T2                    8 bytes: server's receive time (response only)
//	40 T3                    8 bytes: server's send time (response only)
//
// The rest of a message is padding up to its length. On TCP the length
// frames the messages; on UDP it must equal the datagram's size.
const (
	magic0, magic1 = 'W', 'R'
	version        = 1

	KindRequest  = 1
	KindResponse = 2
)

// Header is what every message carries.
type Header struct {
	Kind     uint8
	Length   uint32
	Response uint32 // the response length a request asks for
	Seq      uint64
	T1       int64
	T2       int64
	T3       int64
}

// Errors of Parse.
var (
	ErrShort      = errors.New("rr: message shorter than the header")
	ErrNotOurs    = errors.New("rr: not a request-response message")
	ErrBadVersion = errors.New("rr: unknown message version")
	ErrBadLength  = errors.New("rr: message length out of range")
)

// Put writes h at the start of b, which must hold HeaderLen bytes.
func (h *Header) Put(b []byte) {
	_ = b[HeaderLen-1]
	b[0], b[1], b[2], b[3] = magic0, magic1, version, h.Kind
	binary.BigEndian.PutUint32(b[4:8], h.Length)
	binary.BigEndian.PutUint32(b[8:12], h.Response)
	binary.BigEndian.PutUint32(b[12:16], 0)
	binary.BigEndian.PutUint64(b[16:24], h.Seq)
	binary.BigEndian.PutUint64(b[24:32], uint64(h.T1))
	binary.BigEndian.PutUint64(b[32:40], uint64(h.T2))
	binary.BigEndian.PutUint64(b[40:48], uint64(h.T3))
}

// Parse reads a header from bytes received from the network. It checks
// the magic, the version and the kind, and that the length is at least a
// header; the caller checks the length against what it read and against
// its limits.
func Parse(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderLen {
		return h, ErrShort
	}
	if b[0] != magic0 || b[1] != magic1 {
		return h, ErrNotOurs
	}
	if b[2] != version {
		return h, ErrBadVersion
	}
	h.Kind = b[3]
	if h.Kind != KindRequest && h.Kind != KindResponse {
		return h, ErrNotOurs
	}
	h.Length = binary.BigEndian.Uint32(b[4:8])
	h.Response = binary.BigEndian.Uint32(b[8:12])
	if h.Length < HeaderLen {
		return h, ErrBadLength
	}
	h.Seq = binary.BigEndian.Uint64(b[16:24])
	h.T1 = int64(binary.BigEndian.Uint64(b[24:32]))
	h.T2 = int64(binary.BigEndian.Uint64(b[32:40]))
	h.T3 = int64(binary.BigEndian.Uint64(b[40:48]))
	return h, nil
}
