// Package iperf2wire is iperf 2's UDP datagram as iperf 2.1 writes and
// reads it: a 16-byte header (a 64-bit signed sequence number split in
// two 32-bit words around the send time in seconds and microseconds),
// then the client header that describes the test (flags, threads, port,
// length, rate and version), the wire of a multicast test, which has no
// control channel (docs/multicast.md, "The wire").
package iperf2wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Sizes of the parts of a datagram, in bytes.
const (
	// HeaderLen is the UDP_datagram header: id, tv_sec, tv_usec, id2.
	HeaderLen = 16
	// ClientHeaderV1Len is client_hdr_v1: flags, numThreads, mPort,
	// mBufLen, mWinBand, mAmount.
	ClientHeaderV1Len = 24
	// ExtendedHeaderLen is what iperf 2.1 writes after the datagram
	// header when the payload has room: client_hdr_v1, client_hdrext and
	// the isochronous and start-time words, all zero here but the first
	// two parts. Its length is in the flags (HEADER_LEN_BIT).
	ExtendedHeaderLen = 152
	// MinPayload is the shortest payload this package writes or reads:
	// the datagram header alone (iperf 2 refuses less than 18 bytes).
	MinPayload = HeaderLen
)

// Flags of client_hdr_v1's first word (iperf 2.1's payloads.h).
const (
	FlagVersion1  uint32 = 0x80000000
	FlagExtend    uint32 = 0x40000000
	FlagUDPTests  uint32 = 0x20000000
	FlagSeqNo64b  uint32 = 0x08000000
	FlagVersion2  uint32 = 0x04000000
	FlagLenBit    uint32 = 0x00010000
	FlagLenMask   uint32 = 0x000001FE
	extFieldsLen         = 36 // client_hdrext: type, length, flags, version, tos, rate, prefetch
	extFieldsFrom        = HeaderLen + ClientHeaderV1Len
	maxAmountUnit        = 10 * time.Millisecond // mAmount < 0 is a time in 10 ms units
)

// Version is the version the extended header names: iperf 2.1.8 final,
// the release whose wire this package implements (iperf 2 reads the
// major and minor to decide what a peer understands).
var Version = [2]uint32{2<<16 | 1, 8<<16 | 3}

// Datagram is one iperf 2 UDP datagram's header.
type Datagram struct {
	// Seq is the datagram's number, from 1. A negative number marks the
	// sender's last datagram (its FIN): -Seq is its number, and so the
	// count of datagrams the sender sent.
	Seq int64
	// Sent is the sender's clock at the send, to the microsecond.
	Sent time.Time
	// Client is the client header, when the datagram carries one.
	Client *ClientHeader
}

// ClientHeader is client_hdr_v1 and, with FlagExtend, the parts of
// client_hdrext this package reads.
type ClientHeader struct {
	Flags   uint32
	Threads int32
	Port    int32
	BufLen  int32
	WinBand int32 // a TCP window in iperf 1.7; 0 in iperf 2.1's UDP header
	// Amount is mAmount: bytes to send when positive, a time in units of
	// 10 ms when negative.
	Amount int32
	// Extended fields (Flags&FlagExtend).
	VersionHi, VersionLo uint32
	TOS                  uint16
	Rate                 uint64
}

// Last reports whether d is the sender's last datagram.
func (d Datagram) Last() bool { return d.Seq < 0 }

// Number is d's number whether or not it is the last.
func (d Datagram) Number() int64 {
	if d.Seq < 0 {
		return -d.Seq
	}
	return d.Seq
}

// Duration is the test length the client header names (0 when it names
// bytes or nothing).
func (h *ClientHeader) Duration() time.Duration {
	if h == nil || h.Amount >= 0 {
		return 0
	}
	return time.Duration(-int64(h.Amount)) * maxAmountUnit
}

var (
	errShort = errors.New("iperf2 datagram: shorter than its 16-byte header")
	errSeq   = errors.New("iperf2 datagram: sequence number 0 (iperf 2 counts from 1)")
	errUsec  = errors.New("iperf2 datagram: microseconds beyond 999999")
)

// Parse reads b's header. A payload too short for a client header, or
// whose flags say it has none, has Client nil. The 64-bit sequence number
// is read as iperf 2.1 reads it: both words when the client header says
// FlagSeqNo64b, the first alone (signed) otherwise.
func Parse(b []byte) (Datagram, error) {
	if len(b) < HeaderLen {
		return Datagram{}, errShort
	}
	id := binary.BigEndian.Uint32(b[0:])
	sec := binary.BigEndian.Uint32(b[4:])
	usec := binary.BigEndian.Uint32(b[8:])
	id2 := binary.BigEndian.Uint32(b[12:])
	if usec > 999999 {
		return Datagram{}, errUsec
	}
	d := Datagram{Sent: time.Unix(int64(sec), int64(usec)*1000)}
	if len(b) >= HeaderLen+ClientHeaderV1Len {
		h := parseClient(b)
		if h.Flags != 0 {
			d.Client = h
		}
	}
	if d.Client != nil && d.Client.Flags&FlagSeqNo64b != 0 {
		d.Seq = int64(uint64(id2)<<32 | uint64(id))
	} else {
		d.Seq = int64(int32(id))
	}
	if d.Seq == 0 {
		return Datagram{}, errSeq
	}
	return d, nil
}

func parseClient(b []byte) *ClientHeader {
	be := binary.BigEndian
	at := func(i int) int32 { return int32(be.Uint32(b[HeaderLen+4*i:])) }
	h := &ClientHeader{Flags: uint32(at(0)), Threads: at(1), Port: at(2), BufLen: at(3), WinBand: at(4), Amount: at(5)}
	if h.Flags&FlagExtend != 0 && len(b) >= extFieldsFrom+extFieldsLen {
		e := b[extFieldsFrom:]
		h.VersionHi, h.VersionLo = be.Uint32(e[12:]), be.Uint32(e[16:])
		h.TOS = be.Uint16(e[22:])
		h.Rate = uint64(be.Uint32(e[24:])) | uint64(be.Uint32(e[28:]))<<32
	}
	return h
}

// Test is what a sender's client header says of its test.
type Test struct {
	Port     int
	Length   int           // bytes per datagram
	Rate     float64       // bit/s, 0 for as fast as possible
	Duration time.Duration // 0 when Bytes is set
	Bytes    int64
	TOS      uint8
}

// Header is the client header a sender of t writes, as iperf 2.1.8
// writes it for a UDP client: extended, with 64-bit sequence numbers.
func Header(t Test) *ClientHeader {
	h := &ClientHeader{
		Flags:   FlagExtend | FlagSeqNo64b | FlagLenBit | ExtendedHeaderLen&FlagLenMask,
		Threads: 1, Port: int32(t.Port), BufLen: int32(t.Length),
		VersionHi: Version[0], VersionLo: Version[1],
		TOS: uint16(t.TOS), Rate: uint64(t.Rate),
	}
	switch {
	case t.Bytes > 0:
		h.Amount = int32(min(t.Bytes, 1<<31-1))
	default:
		units := (t.Duration + maxAmountUnit - 1) / maxAmountUnit
		h.Amount = -int32(min(int64(units), 1<<31-1))
	}
	return h
}

// Put writes d into b, which is the whole payload: the header, the
// client header when d has one and b has room for it (the extended part
// only when b holds all of ExtendedHeaderLen), and zeros after. It
// returns an error when b is shorter than MinPayload.
func Put(b []byte, d Datagram) error {
	if len(b) < MinPayload {
		return fmt.Errorf("iperf2 datagram: %d bytes, want at least %d", len(b), MinPayload)
	}
	if d.Seq == 0 {
		return errSeq
	}
	clear(b)
	be := binary.BigEndian
	u := uint64(d.Seq)
	be.PutUint32(b[0:], uint32(u))
	be.PutUint32(b[12:], uint32(u>>32))
	us := d.Sent.UnixMicro()
	be.PutUint32(b[4:], uint32(us/1e6))
	be.PutUint32(b[8:], uint32(us%1e6))
	h := d.Client
	if h == nil || len(b) < HeaderLen+ClientHeaderV1Len {
		return nil
	}
	flags := h.Flags
	ext := flags&FlagExtend != 0 && len(b) >= HeaderLen+ExtendedHeaderLen
	if !ext {
		// No room for what the flags announce: keep the 64-bit numbers,
		// which the two words carry anyway, and announce nothing else.
		flags &^= FlagExtend | FlagLenBit | FlagLenMask
	}
	for i, v := range []int32{int32(flags), h.Threads, h.Port, h.BufLen, h.WinBand, h.Amount} {
		be.PutUint32(b[HeaderLen+4*i:], uint32(v))
	}
	if ext {
		e := b[extFieldsFrom:]
		be.PutUint32(e[12:], h.VersionHi)
		be.PutUint32(e[16:], h.VersionLo)
		be.PutUint16(e[22:], h.TOS)
		be.PutUint32(e[24:], uint32(h.Rate))
		be.PutUint32(e[28:], uint32(h.Rate>>32))
	}
	return nil
}

// PutSeq rewrites only the sequence number and the send time of a payload
// Put wrote: what changes from one datagram to the next.
func PutSeq(b []byte, seq int64, sent time.Time) {
	be := binary.BigEndian
	u := uint64(seq)
	us := sent.UnixMicro()
	be.PutUint32(b[0:], uint32(u))
	be.PutUint32(b[4:], uint32(us/1e6))
	be.PutUint32(b[8:], uint32(us%1e6))
	be.PutUint32(b[12:], uint32(u>>32))
}
