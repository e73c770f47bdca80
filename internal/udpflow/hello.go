package udpflow

import (
	"bytes"
	"encoding/binary"
)

// A UDP stream is set up by the client: it sends a hello from its stream
// socket to the server's port until the server answers with an ack from
// the stream's own socket (see internal/udpmux).
const HelloLen = 4 + 16 + 4

var (
	helloMagic = [4]byte{'W', 'P', 'R', 'U'}
	ackMagic   = [4]byte{'W', 'P', 'R', 'A'}
)

// Hello names a test and a stream.
type Hello struct {
	Token    [16]byte
	StreamID uint32
}

func (h Hello) encode(magic [4]byte) []byte {
	b := make([]byte, HelloLen)
	copy(b, magic[:])
	copy(b[4:20], h.Token[:])
	binary.BigEndian.PutUint32(b[20:], h.StreamID)
	return b
}

// MarshalHello is the client's hello datagram.
func (h Hello) MarshalHello() []byte { return h.encode(helloMagic) }

// MarshalAck is the server's answer.
func (h Hello) MarshalAck() []byte { return h.encode(ackMagic) }

func parse(b []byte, magic [4]byte) (Hello, bool) {
	var h Hello
	if len(b) != HelloLen || !bytes.Equal(b[:4], magic[:]) {
		return h, false
	}
	copy(h.Token[:], b[4:20])
	h.StreamID = binary.BigEndian.Uint32(b[20:])
	return h, true
}

// ParseHello decodes a hello datagram.
func ParseHello(b []byte) (Hello, bool) { return parse(b, helloMagic) }

// ParseAck decodes an ack datagram.
func ParseAck(b []byte) (Hello, bool) { return parse(b, ackMagic) }
