// Package proto is wireperf's native control protocol: a greeting with a
// magic and a version, then length-prefixed frames whose bodies are JSON.
// Every decoder here reads bytes from the network, so every length is
// checked before it is trusted.
package proto

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version this build speaks.
const Version = 1

// MaxFrame caps one frame. The largest legitimate frame is a server's final
// report for MaxStreams streams; anything larger is refused unread.
const MaxFrame = 1 << 20

// Magics open a connection and say what it is. They are upper-case ASCII,
// which an iperf3 cookie ([a-z2-7]) never starts with.
var (
	MagicControl = [4]byte{'W', 'P', 'R', 'C'} // client → server: control connection
	MagicServer  = [4]byte{'W', 'P', 'R', 'S'} // server → client: greeting reply
	MagicData    = [4]byte{'W', 'P', 'R', 'D'} // client → server: data connection
)

// GreetingLen is the size of a control greeting: magic, version, reserved.
const GreetingLen = 8

// Errors a peer can cause.
var (
	ErrBadMagic     = errors.New("not a wireperf peer (bad magic)")
	ErrFrameTooBig  = fmt.Errorf("frame larger than %d bytes", MaxFrame)
	ErrEmptyFrame   = errors.New("empty frame")
	ErrUnknownType  = errors.New("unknown message type")
	ErrWrongVersion = errors.New("unsupported protocol version")
)

// Greeting flags, in the server's greeting's last two bytes (a client
// sends zero there, and a server before them sent zero too).
const (
	// FlagAuth says the server requires a key: a Challenge follows.
	FlagAuth uint16 = 1 << 0
)

// WriteGreeting sends a magic and our version.
func WriteGreeting(w io.Writer, magic [4]byte) error {
	return WriteGreetingFlags(w, magic, 0)
}

// WriteGreetingFlags sends a magic, our version and flags.
func WriteGreetingFlags(w io.Writer, magic [4]byte, flags uint16) error {
	var b [GreetingLen]byte
	copy(b[:4], magic[:])
	binary.BigEndian.PutUint16(b[4:6], Version)
	binary.BigEndian.PutUint16(b[6:8], flags)
	_, err := w.Write(b[:])
	return err
}

// GreetingFlags are the flags of a greeting already checked.
func GreetingFlags(b []byte) uint16 {
	if len(b) < GreetingLen {
		return 0
	}
	return binary.BigEndian.Uint16(b[6:8])
}

// ReadGreeting reads a greeting and checks its magic. It returns the
// peer's version; versions we do not speak are an error.
func ReadGreeting(r io.Reader, magic [4]byte) (uint16, error) {
	var b [GreetingLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return ParseGreeting(b[:], magic)
}

// ParseGreeting checks a greeting already read.
func ParseGreeting(b []byte, magic [4]byte) (uint16, error) {
	if len(b) < GreetingLen {
		return 0, io.ErrUnexpectedEOF
	}
	if [4]byte(b[:4]) != magic {
		return 0, ErrBadMagic
	}
	v := binary.BigEndian.Uint16(b[4:6])
	if v != Version {
		return v, fmt.Errorf("%w: peer speaks %d, we speak %d", ErrWrongVersion, v, Version)
	}
	return v, nil
}

// WriteFrame sends one message: a 4-byte big-endian length, a type byte
// and the JSON body.
func WriteFrame(w io.Writer, t Type, body any) error {
	js, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding %v: %w", t, err)
	}
	if len(js)+1 > MaxFrame {
		return fmt.Errorf("encoding %v: %w", t, ErrFrameTooBig)
	}
	buf := make([]byte, 5+len(js))
	binary.BigEndian.PutUint32(buf[:4], uint32(len(js)+1))
	buf[4] = byte(t)
	copy(buf[5:], js)
	_, err = w.Write(buf)
	return err
}

// Frame is one undecoded message.
type Frame struct {
	Type Type
	Body []byte
}

// readChunk is how much of a frame's body is read, and allocated, at a
// time: a peer that announces 1 MiB and sends nothing costs 4 KiB.
const readChunk = 4 << 10

// ReadFrame reads one frame, refusing any length over MaxFrame before
// reading it, and allocating only as the body's bytes arrive.
func ReadFrame(r io.Reader) (Frame, error) { return ReadFrameIf(r, nil) }

// ReadFrameIf is ReadFrame with a check of the frame's type before its
// body is read: a frame the reader would refuse costs nothing to refuse.
func ReadFrameIf(r io.Reader, admit func(Type) error) (Frame, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:4]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n == 0 {
		return Frame{}, ErrEmptyFrame
	}
	if n > MaxFrame {
		return Frame{}, fmt.Errorf("%w (peer announced %d)", ErrFrameTooBig, n)
	}
	if _, err := io.ReadFull(r, hdr[4:5]); err != nil {
		return Frame{}, unexpected(err)
	}
	t := Type(hdr[4])
	if !t.known() {
		return Frame{}, fmt.Errorf("%w %d", ErrUnknownType, hdr[4])
	}
	if admit != nil {
		if err := admit(t); err != nil {
			return Frame{Type: t}, err
		}
	}
	body, err := readBody(r, int(n-1))
	if err != nil {
		return Frame{}, unexpected(err)
	}
	return Frame{Type: t, Body: body}, nil
}

// readBody reads n bytes, growing its buffer by what has arrived.
func readBody(r io.Reader, n int) ([]byte, error) {
	body := make([]byte, 0, min(n, readChunk))
	for len(body) < n {
		if len(body) == cap(body) { // doubling, so the copies add up to n at most
			grown := make([]byte, len(body), len(body)+min(n-len(body), max(readChunk, len(body))))
			copy(grown, body)
			body = grown
		}
		k, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+k]
		if err != nil && len(body) < n {
			return nil, err
		}
	}
	return body, nil
}

// Decode unmarshals a frame's body into v, which must match its type. A
// body whose shape could decode to far more memory than its size (deep
// nesting, huge arrays of empty objects) is refused before it is decoded.
func (f Frame) Decode(v any) error { return DecodeBody(f.Type, f.Body, v) }

// DecodeBody is Decode for any framing whose bodies are JSON (the agent's
// too): the shape is bounded before the body is decoded. what names the
// frame in errors.
func DecodeBody(what fmt.Stringer, body []byte, v any) error {
	if err := CheckShape(body); err != nil {
		return fmt.Errorf("decoding %v: %w", what, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding %v: %w", what, err)
	}
	return nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
