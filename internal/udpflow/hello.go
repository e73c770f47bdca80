package udpflow

import (
	"bytes"
	"encoding/binary"
)

// A UDP stream is set up by the client: it sends a hello from its stream
// socket to the server's port, again every 50 ms, until the server's
// streams-ready frame arrives on the control connection
// (internal/control's ReadReadyUDP). The server answers no hello with a
// datagram: the hello that matches a test gives the stream a socket of
// its own (internal/udpmux). docs/protocol.md, "Hellos".
const HelloLen = 4 + 16 + 4

var helloMagic = [4]byte{'W', 'P', 'R', 'U'}

// Hello names a test and a stream.
type Hello struct {
	Token    [16]byte
	StreamID uint32
}

// MarshalHello is the client's hello datagram.
func (h Hello) MarshalHello() []byte {
	b := make([]byte, HelloLen)
	copy(b, helloMagic[:])
	copy(b[4:20], h.Token[:])
	binary.BigEndian.PutUint32(b[20:], h.StreamID)
	return b
}

// ParseHello decodes a hello datagram.
func ParseHello(b []byte) (Hello, bool) {
	var h Hello
	if len(b) != HelloLen || !bytes.Equal(b[:4], helloMagic[:]) {
		return h, false
	}
	copy(h.Token[:], b[4:20])
	h.StreamID = binary.BigEndian.Uint32(b[20:])
	return h, true
}
