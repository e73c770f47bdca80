package proto

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
)

// TokenLen is the size of a test token: 128 random bits.
const TokenLen = 16

// Token identifies one test on a server running many.
type Token [TokenLen]byte

// String is the token in hex, as it travels in JSON.
func (t Token) String() string { return hex.EncodeToString(t[:]) }

// ParseToken reads a hex token.
func ParseToken(s string) (Token, error) {
	var t Token
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != TokenLen {
		return t, fmt.Errorf("bad test token %q", s)
	}
	copy(t[:], b)
	return t, nil
}

// DataHelloLen is the size of the first bytes of a data connection: the
// magic, the test token and the stream ID.
const DataHelloLen = 4 + TokenLen + 4

// DataHello opens a data connection.
type DataHello struct {
	Token    Token
	StreamID uint32
}

// Marshal encodes the hello.
func (h DataHello) Marshal() []byte {
	b := make([]byte, DataHelloLen)
	copy(b[:4], MagicData[:])
	copy(b[4:4+TokenLen], h.Token[:])
	binary.BigEndian.PutUint32(b[4+TokenLen:], h.StreamID)
	return b
}

// ParseDataHello decodes a data hello, magic included.
func ParseDataHello(b []byte) (DataHello, error) {
	var h DataHello
	if len(b) < DataHelloLen {
		return h, io.ErrUnexpectedEOF
	}
	if [4]byte(b[:4]) != MagicData {
		return h, ErrBadMagic
	}
	copy(h.Token[:], b[4:4+TokenLen])
	h.StreamID = binary.BigEndian.Uint32(b[4+TokenLen:])
	return h, nil
}
