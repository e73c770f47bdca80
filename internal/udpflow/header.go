// Package udpflow is the UDP data plane: paced senders and receivers that
// account for every datagram by its own header.
package udpflow

import (
	"encoding/binary"
	"errors"
)

// HeaderLen is the size of the header at the start of every datagram.
const HeaderLen = 40

// Datagram header layout (big-endian):
//
//	0  magic "WU"        2 bytes
//	2  version           1 byte
//	3  flags             1 byte: 0x01 a MAC follows; others reserved, 0
//	4  test token        16 bytes
//	20 stream ID         4 bytes
//	24 sequence number   8 bytes, from 0
//	32 send time         8 bytes, ns since the Unix epoch (sender's wall clock)
//	40 MAC               16 bytes, only with flag 0x01 (see Signer)
const (
	magic0, magic1 = 'W', 'U'
	version        = 1
	flagMAC        = 0x01
)

// Header is what each datagram carries.
type Header struct {
	Token    [16]byte
	StreamID uint32
	Seq      uint64
	SentNs   int64
}

// Errors of Parse.
var (
	ErrShort      = errors.New("datagram shorter than the header")
	ErrNotOurs    = errors.New("not a wireperf datagram")
	ErrBadVersion = errors.New("unknown datagram version")
)

// Put writes h at the start of b, which must hold HeaderLen bytes.
func (h *Header) Put(b []byte) {
	_ = b[HeaderLen-1]
	b[0], b[1], b[2], b[3] = magic0, magic1, version, 0
	copy(b[4:20], h.Token[:])
	binary.BigEndian.PutUint32(b[20:24], h.StreamID)
	binary.BigEndian.PutUint64(b[24:32], h.Seq)
	binary.BigEndian.PutUint64(b[32:40], uint64(h.SentNs))
}

// PutSeqTime rewrites only the fields that change from one datagram to the
// next, for a buffer whose header was written once with Put.
func PutSeqTime(b []byte, seq uint64, sentNs int64) {
	_ = b[HeaderLen-1]
	binary.BigEndian.PutUint64(b[24:32], seq)
	binary.BigEndian.PutUint64(b[32:40], uint64(sentNs))
}

// Parse reads a header from a datagram received from the network.
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
	copy(h.Token[:], b[4:20])
	h.StreamID = binary.BigEndian.Uint32(b[20:24])
	h.Seq = binary.BigEndian.Uint64(b[24:32])
	h.SentNs = int64(binary.BigEndian.Uint64(b[32:40]))
	return h, nil
}

// matcher tells one stream's datagrams apart at the cost of three word
// compares: the magic, version, token and stream ID are the first 24 bytes
// of every datagram of the stream, only the flags byte may vary.
type matcher struct {
	w [3]uint64 // the expected words, flags byte zeroed
}

// flagsMask clears the flags byte (offset 3) of the first word.
const flagsMask = ^uint64(0xff << 24)

func newMatcher(token [16]byte, stream uint32) matcher {
	var b [HeaderLen]byte
	(&Header{Token: token, StreamID: stream}).Put(b[:])
	var m matcher
	for i := range m.w {
		m.w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	m.w[0] &= flagsMask
	return m
}

// match returns the sequence number and send time of a datagram of the
// stream; ok is false for anything else (short, not ours, another test or
// stream), which Parse would reject or tell apart.
func (m *matcher) match(b []byte) (seq uint64, sentNs int64, ok bool) {
	if len(b) < HeaderLen {
		return 0, 0, false
	}
	if binary.LittleEndian.Uint64(b[0:8])&flagsMask != m.w[0] ||
		binary.LittleEndian.Uint64(b[8:16]) != m.w[1] ||
		binary.LittleEndian.Uint64(b[16:24]) != m.w[2] {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[24:32]), int64(binary.BigEndian.Uint64(b[32:40])), true
}
