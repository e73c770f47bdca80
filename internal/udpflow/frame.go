package udpflow

import (
	"encoding/binary"
	"errors"

	"github.com/wireperf/wireperf/internal/spec"
)

// The frame fields of an isochronous stream's datagrams (--isochronous):
// flag 0x02 says they follow the 40-byte header, and a signed datagram's
// MAC then follows them and covers them (docs/protocol.md, "UDP
// datagrams"):
//
//	40 frame number        8 bytes, from 0
//	48 frame's send time   8 bytes, ns since the Unix epoch: when the
//	                       frame was due (its schedule), sender's clock
//	56 datagrams in frame  4 bytes, at least 1
//	60 datagram's index    4 bytes, from 0, below the count
const (
	flagFrame = 0x02
	// FrameHeaderLen is the header of an isochronous datagram, frame
	// fields included.
	FrameHeaderLen = spec.MinIsochronousLength
	// MaxFrameDatagrams bounds the datagrams of one frame: the largest
	// frame isoch.Frames draws (1 GiB) in 16-byte datagrams, the least a
	// UDP test sends.
	MaxFrameDatagrams = 1 << 26
)

// Frame is an isochronous datagram's frame fields.
type Frame struct {
	Number uint64
	DueNs  int64 // when the frame was due, sender's clock
	Count  uint32
	Index  uint32
}

// ErrBadFrame is a datagram whose frame fields are missing or impossible.
var ErrBadFrame = errors.New("isochronous datagram without valid frame fields")

// PutFrame marks the header at the start of b as carrying frame fields and
// writes them; b must hold FrameHeaderLen bytes. A signed datagram is
// signed after it (Signer covers them).
func PutFrame(b []byte, f Frame) {
	_ = b[FrameHeaderLen-1]
	b[3] |= flagFrame
	binary.BigEndian.PutUint64(b[40:48], f.Number)
	binary.BigEndian.PutUint64(b[48:56], uint64(f.DueNs))
	binary.BigEndian.PutUint32(b[56:60], f.Count)
	binary.BigEndian.PutUint32(b[60:64], f.Index)
}

// ParseFrame reads the frame fields of a datagram received from the
// network whose header is already matched: ErrBadFrame when it is too
// short, lacks the flag, or names an index outside a count of 1 to
// MaxFrameDatagrams.
func ParseFrame(b []byte) (Frame, error) {
	if len(b) < FrameHeaderLen || b[3]&flagFrame == 0 {
		return Frame{}, ErrBadFrame
	}
	f := Frame{
		Number: binary.BigEndian.Uint64(b[40:48]),
		DueNs:  int64(binary.BigEndian.Uint64(b[48:56])),
		Count:  binary.BigEndian.Uint32(b[56:60]),
		Index:  binary.BigEndian.Uint32(b[60:64]),
	}
	if f.Count == 0 || f.Count > MaxFrameDatagrams || f.Index >= f.Count {
		return Frame{}, ErrBadFrame
	}
	return f, nil
}

// headerLen is the length of b's header as its flags say: what a MAC
// covers and follows.
func headerLen(b []byte) int {
	if len(b) > 3 && b[3]&flagFrame != 0 {
		return FrameHeaderLen
	}
	return HeaderLen
}
