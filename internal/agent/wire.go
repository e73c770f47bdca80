// Package agent lets a wireperf server run a client test on a
// controller's behalf: the controller proves it holds the agent key, the
// two measure their clocks' offset, and the agent runs one test to a
// target whose own server accepted it, holding its streams until a start
// instant the controller names. docs/protocol-agent.md has the wire
// format.
package agent

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/spec"
)

// Magic opens an agent control connection, where a test's opens with
// WPRC; the agent answers with the same magic.
var Magic = [4]byte{'W', 'P', 'R', 'A'}

// Version is the agent protocol's version: 2 seals every frame after the
// welcome (seal.go); a version-1 peer is refused at the greeting.
const Version = 2

// Frame caps. Every frame but the agent's final report is small; the
// report carries a whole test's result, intervals of both ends included.
const (
	MaxFrame       = 64 << 10
	MaxReportFrame = 32 << 20
)

// Type says what a frame carries.
type Type uint8

// The message types, in the order a session uses them.
const (
	TypeChallenge    Type = 1  // agent → controller: Challenge
	TypeAuth         Type = 2  // controller → agent: Auth
	TypeWelcome      Type = 3  // agent → controller: Welcome
	TypeClockRequest Type = 4  // controller → agent: ClockRequest
	TypeClockReply   Type = 5  // agent → controller: ClockReply
	TypePrepare      Type = 6  // controller → agent: Prepare
	TypePrepared     Type = 7  // agent → controller: Prepared
	TypeStart        Type = 8  // controller → agent: Start
	TypeStarted      Type = 9  // agent → controller: Started
	TypeStop         Type = 10 // controller → agent: Stop
	TypeReport       Type = 11 // agent → controller: Report
	TypeError        Type = 12 // either way: Error, then the connection closes
)

var typeNames = map[Type]string{
	TypeChallenge: "challenge", TypeAuth: "auth", TypeWelcome: "welcome",
	TypeClockRequest: "clock-request", TypeClockReply: "clock-reply",
	TypePrepare: "prepare", TypePrepared: "prepared", TypeStart: "start", TypeStarted: "started",
	TypeStop: "stop", TypeReport: "report", TypeError: "error",
}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type-%d", uint8(t))
}

// maxLen is the largest body a frame of type t may announce.
func (t Type) maxLen() int {
	if t == TypeReport {
		return MaxReportFrame
	}
	return MaxFrame
}

// Errors a peer can cause.
var (
	ErrBadMagic = errors.New("not a wireperf agent (bad magic)")
	// The frame errors are the control protocol's, which reads both.
	ErrUnknownType = proto.ErrUnknownType
	ErrTooBig      = proto.ErrFrameTooBig
	ErrEmpty       = proto.ErrEmptyFrame
)

// Challenge and Auth are the native protocol's (proto.Challenge,
// proto.Auth): the agent's fresh nonce, and the controller's user, nonce
// and HMAC of both nonces under the key (internal/auth).
type (
	Challenge = proto.Challenge
	Auth      = proto.Auth
)

// Welcome admits the controller and proves the agent holds the key too.
type Welcome struct {
	MAC      []byte    `json:"mac"`
	Hostname string    `json:"hostname,omitempty"`
	Version  string    `json:"version,omitempty"`
	Clock    ClockSync `json:"clock"`
}

// ClockRequest and ClockReply are the native protocol's NTP-style probe
// (proto.ClockRequest, proto.ClockReply): T1 is the controller's wall
// clock at sending, T2 and T3 the agent's at arrival and departure, in ns
// since the Unix epoch.
type (
	ClockRequest = proto.ClockRequest
	ClockReply   = proto.ClockReply
)

// Prepare asks the agent to set a test up with Target (host:port), which
// must be a wireperf server that accepts it, and to connect its streams.
type Prepare struct {
	Target string    `json:"target"`
	Spec   spec.Spec `json:"spec"`
}

// Prepared says the target accepted the test and every stream is up.
type Prepared struct{}

// Start names the instant to start at, on the agent's own clock (ns since
// the Unix epoch): the controller has added the offset it measured.
type Start struct {
	AtNs int64 `json:"at_ns"`
}

// Started is when the agent actually started, on its own clock.
type Started struct {
	AtNs int64 `json:"at_ns"`
}

// Stop ends a running test early, or abandons a prepared one.
type Stop struct {
	Reason string `json:"reason,omitempty"`
}

// Report is the test's result as the agent's client saw it (a
// result.Result), and its error when it failed or was cut short.
type Report struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Error is a refusal or an abort, with its reason.
type Error struct {
	Message string `json:"message"`
}

// WriteGreeting sends the magic and our version.
func WriteGreeting(w io.Writer) error {
	var b [proto.GreetingLen]byte
	copy(b[:4], Magic[:])
	binary.BigEndian.PutUint16(b[4:6], Version)
	_, err := w.Write(b[:])
	return err
}

// ReadGreetingRest reads a greeting's bytes after its magic (the server
// has read the magic to route the connection) and checks the version.
func ReadGreetingRest(r io.Reader) error {
	var b [proto.GreetingLen - 4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return err
	}
	if v := binary.BigEndian.Uint16(b[:2]); v != Version {
		return fmt.Errorf("agent protocol version %d, we speak %d", v, Version)
	}
	return nil
}

// ReadGreeting reads a whole greeting.
func ReadGreeting(r io.Reader) error {
	var m [4]byte
	if _, err := io.ReadFull(r, m[:]); err != nil {
		return err
	}
	if m != Magic {
		return ErrBadMagic
	}
	return ReadGreetingRest(r)
}

// framing is the agent channel's: the control protocol's frames
// (proto.Framing) with the agent's types and caps.
var framing = proto.Framing{MaxBody: func(t uint8) (int, bool) {
	if _, ok := typeNames[Type(t)]; !ok {
		return 0, false
	}
	return Type(t).maxLen(), true
}}

// WriteFrame sends one message: a 4-byte big-endian length of the type
// byte and body, the type byte, and the JSON body.
func WriteFrame(w io.Writer, t Type, body any) error {
	return framing.Write(w, uint8(t), t, body)
}

// Frame is one undecoded message.
type Frame struct {
	Type Type
	Body []byte
}

// ReadFrame reads one frame. admit, when set, decides by the type alone
// whether the frame is welcome, before its body is read. A length over the
// type's cap is refused unread, and the body is allocated as it arrives.
func ReadFrame(r io.Reader, admit func(Type) error) (Frame, error) {
	var check func(uint8) error
	if admit != nil {
		check = func(t uint8) error { return admit(Type(t)) }
	}
	t, body, err := framing.Read(r, check)
	if err != nil {
		if t != 0 {
			return Frame{Type: Type(t)}, err
		}
		return Frame{}, err
	}
	return Frame{Type: Type(t), Body: body}, nil
}

// Decode unmarshals the body into v, refusing shapes that would decode to
// far more memory than their size (proto.CheckShape).
func (f Frame) Decode(v any) error { return proto.DecodeBody(f.Type, f.Body, v) }
