package iperf2wire

import (
	"encoding/binary"
	"time"
)

// Isochronous datagrams (iperf 2's --isochronous): the client header
// says so (FlagUDPTests and the extended header's HeaderIsoch), and
// words 19 to 25 of the payload carry the frame each datagram belongs to.
const (
	// HeaderIsoch is client_hdrext's upper flag of an isochronous test.
	HeaderIsoch uint16 = 0x0001
	// IsochHeaderLen is the header length an isochronous datagram's
	// flags name (HEADER_LEN_MASK): 216 bytes after the first 16.
	IsochHeaderLen = 216
	// MinIsochPayload is the shortest payload that carries the frame
	// fields with the header iperf 2.1.8 writes.
	MinIsochPayload = HeaderLen + IsochHeaderLen
	isochFrom       = 76 // word 19: the burst period
	upperFlagsAt    = 48
)

// Isoch is an isochronous datagram's frame fields.
type Isoch struct {
	Period    time.Duration // between frames (to the microsecond)
	Start     time.Time     // the sender's first frame (to the microsecond)
	PrevFrame uint32        // the frame before this one (0 before the first)
	Frame     uint32        // from 1; a frame that goes late skips numbers
	BurstSize uint32        // the frame's bytes
	// Remaining is the frame's bytes from this datagram's on, this one's
	// included: the frame's last datagram has Remaining ≤ its length.
	Remaining uint32
}

// ParseIsoch reads b's frame fields, if b is an isochronous datagram
// (its client header has FlagExtend and FlagUDPTests, and HeaderIsoch).
func ParseIsoch(b []byte) (Isoch, bool) {
	if len(b) < isochFrom+28 {
		return Isoch{}, false
	}
	be := binary.BigEndian
	flags := be.Uint32(b[HeaderLen:])
	if flags&FlagExtend == 0 || flags&FlagUDPTests == 0 || be.Uint16(b[upperFlagsAt:])&HeaderIsoch == 0 {
		return Isoch{}, false
	}
	w := func(i int) uint32 { return be.Uint32(b[isochFrom+4*i:]) }
	usec := w(2)
	if usec > 999999 {
		return Isoch{}, false
	}
	return Isoch{
		Period:    time.Duration(w(0)) * time.Microsecond,
		Start:     time.Unix(int64(w(1)), int64(usec)*1000),
		PrevFrame: w(3), Frame: w(4), BurstSize: w(5), Remaining: w(6),
	}, true
}

// PutIsoch marks b (a payload Put wrote with an extended client header,
// at least MinIsochPayload long) as isochronous and writes its frame
// fields; it reports false, writing nothing, when b is too short.
func PutIsoch(b []byte, f Isoch) bool {
	if len(b) < MinIsochPayload {
		return false
	}
	be := binary.BigEndian
	flags := be.Uint32(b[HeaderLen:])
	flags = flags&^FlagLenMask | FlagExtend | FlagUDPTests | FlagLenBit | IsochHeaderLen&FlagLenMask
	be.PutUint32(b[HeaderLen:], flags)
	be.PutUint16(b[upperFlagsAt:], be.Uint16(b[upperFlagsAt:])|HeaderIsoch)
	us := f.Start.UnixMicro()
	for i, v := range []uint32{uint32(f.Period / time.Microsecond), uint32(us / 1e6), uint32(us % 1e6), f.PrevFrame, f.Frame, f.BurstSize, f.Remaining} {
		be.PutUint32(b[isochFrom+4*i:], v)
	}
	return true
}
