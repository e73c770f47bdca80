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

// Versions of the protocol (docs/protocol.md, "Versions"). A client greets
// with Version unless its test needs more: an isochronous UDP test
// (spec.Isochronous) needs VersionIsochronous, whose datagrams carry frame
// fields, so that a server that predates them refuses the greeting, in
// one line, rather than run another test. A server answers with the
// client's version, any from Version to MaxVersion.
const (
	Version            = 1
	VersionIsochronous = 2
	MaxVersion         = VersionIsochronous
)

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
	ErrFrameTooBig  = errors.New("frame too large")
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
	return WriteGreetingVersion(w, magic, Version, flags)
}

// WriteGreetingVersion sends a magic, a version and flags.
func WriteGreetingVersion(w io.Writer, magic [4]byte, version, flags uint16) error {
	var b [GreetingLen]byte
	copy(b[:4], magic[:])
	binary.BigEndian.PutUint16(b[4:6], version)
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
// peer's version; versions we do not speak (Version to MaxVersion) are an
// error.
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
	if v < Version || v > MaxVersion {
		return v, fmt.Errorf("%w: peer speaks %d, we speak %d to %d", ErrWrongVersion, v, Version, MaxVersion)
	}
	return v, nil
}

// Framing is the frame format of every wireperf control channel, a
// test's and an agent's: a 4-byte big-endian length of what follows, a
// type byte, and a JSON body. A channel names its types and caps each
// one's body; a length over the cap is refused unread, and a body is
// allocated only as its bytes arrive.
type Framing struct {
	// MaxBody is the largest body a frame of type t may carry; ok is
	// false for a type the channel does not know.
	MaxBody func(t uint8) (max int, ok bool)
}

// Write marshals body and sends it as one frame of type t; name names the
// frame in errors.
func (f Framing) Write(w io.Writer, t uint8, name fmt.Stringer, body any) error {
	js, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding %v: %w", name, err)
	}
	if most, _ := f.MaxBody(t); len(js) > most {
		return fmt.Errorf("encoding %v: %w: %d bytes (at most %d)", name, ErrFrameTooBig, len(js), most)
	}
	buf := make([]byte, 5+len(js))
	binary.BigEndian.PutUint32(buf[:4], uint32(len(js)+1))
	buf[4] = t
	copy(buf[5:], js)
	_, err = w.Write(buf)
	return err
}

// Read reads one frame. admit, when set, decides by the type alone
// whether the frame is welcome, before its body is read: a frame the
// reader would refuse costs nothing to refuse. On admit's refusal the
// type is returned with its error.
func (f Framing) Read(r io.Reader, admit func(t uint8) error) (t uint8, body []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:4]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n == 0 {
		return 0, nil, ErrEmptyFrame
	}
	if _, err := io.ReadFull(r, hdr[4:5]); err != nil {
		return 0, nil, unexpected(err)
	}
	t = hdr[4]
	most, known := f.MaxBody(t)
	if !known {
		return 0, nil, fmt.Errorf("%w %d", ErrUnknownType, t)
	}
	if int64(n)-1 > int64(most) {
		return 0, nil, fmt.Errorf("%w (peer announced %d bytes of type %d, at most %d)", ErrFrameTooBig, n-1, t, most)
	}
	if admit != nil {
		if err := admit(t); err != nil {
			return t, nil, err
		}
	}
	if body, err = readBody(r, int(n-1)); err != nil {
		return 0, nil, unexpected(err)
	}
	return t, body, nil
}

// controlFraming is a test's control channel: every known type, each up
// to MaxFrame in all.
var controlFraming = Framing{MaxBody: func(t uint8) (int, bool) { return MaxFrame - 1, Type(t).known() }}

// WriteFrame sends one message of a test's control channel.
func WriteFrame(w io.Writer, t Type, body any) error {
	return controlFraming.Write(w, uint8(t), t, body)
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
	var check func(uint8) error
	if admit != nil {
		check = func(t uint8) error { return admit(Type(t)) }
	}
	t, body, err := controlFraming.Read(r, check)
	if err != nil {
		if t != 0 {
			return Frame{Type: Type(t)}, err
		}
		return Frame{}, err
	}
	return Frame{Type: Type(t), Body: body}, nil
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
