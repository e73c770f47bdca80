package proto

import (
	"encoding/json"
	"fmt"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// Type says what a frame carries.
type Type uint8

// The message types, in the order a test uses them.
const (
	TypeTestRequest  Type = 1 // client → server: TestRequest
	TypeTestAccept   Type = 2 // server → client: TestAccept
	TypeError        Type = 3 // either way: Error; refusal or abort
	TypeStreamsReady Type = 4 // server → client: StreamsReady
	TypeStart        Type = 5 // client → server: Start
	TypeInterval     Type = 6 // server → client: result.Interval
	TypeStop         Type = 7 // client → server: Stop
	TypeEndReport    Type = 8 // either way: result.End, the sender's final view
	TypeSenderDone   Type = 9 // either way: SenderDone, once an end's senders have all stopped
)

// Message types of request-response tests, after the ones above.
const (
	TypeClockRequest Type = 10 // client → server: ClockRequest, an NTP-style probe of the clocks
	TypeClockReply   Type = 11 // server → client: ClockReply
)

// Message types of authentication, when the server requires a key.
const (
	TypeChallenge Type = 12 // server → client: Challenge
	TypeAuth      Type = 13 // client → server: Auth
	TypeAuthOK    Type = 14 // server → client: AuthOK
)

// TypeServerOutput carries the server's own report of a bulk test, after
// the client's final report, to a client that asked for it and whose
// TestAccept said it comes.
const TypeServerOutput Type = 15 // server → client: ServerOutput

var typeNames = map[Type]string{
	TypeTestRequest:  "test-request",
	TypeTestAccept:   "test-accept",
	TypeError:        "error",
	TypeStreamsReady: "streams-ready",
	TypeStart:        "start",
	TypeInterval:     "interval",
	TypeStop:         "stop",
	TypeEndReport:    "end-report",
	TypeSenderDone:   "sender-done",
	TypeClockRequest: "clock-request",
	TypeClockReply:   "clock-reply",
	TypeChallenge:    "challenge",
	TypeAuth:         "auth",
	TypeAuthOK:       "auth-ok",
	TypeServerOutput: "server-output",
}

func (t Type) known() bool { _, ok := typeNames[t]; return ok }

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type-%d", uint8(t))
}

// TestRequest asks the server to run a test.
type TestRequest struct {
	Spec   spec.Spec   `json:"spec"`
	Client result.Host `json:"client"`
	// ControlRTTNs is the client's measure of the control connection's
	// round trip; both ends size their drain time from it.
	ControlRTTNs int64 `json:"control_rtt_ns,omitempty"`
	// ServerOutput asks for the server's own report of the test at its
	// end (--get-server-output). Servers before it ignore the field.
	ServerOutput bool `json:"server_output,omitempty"`
	// Format is the client's -f, one letter of "abkmgtABKMGT", for the
	// server's report in ServerOutput. Absent, or a letter this server
	// does not know, is the server's own default (adaptive bits), as
	// before the field; servers before it ignore it.
	Format string `json:"format,omitempty"`
}

// OutputFormat is the request's Format as a unit, or the zero Format
// (the server's default) when it is absent or not one.
func (r TestRequest) OutputFormat() units.Format {
	f, err := units.ParseFormat(r.Format)
	if err != nil {
		return 0
	}
	return f
}

// TestAccept admits a test and names its token, which every data
// connection must present.
type TestAccept struct {
	Token  string         `json:"token"` // hex of TokenLen random bytes
	Server result.Host    `json:"server"`
	Limits *result.Limits `json:"limits,omitempty"`
	// ServerOutput promises a server-output frame after the client's
	// final report: the client asked, and this server sends one. A client
	// waits for the frame only when it is set.
	ServerOutput bool `json:"server_output,omitempty"`
	// StreamTOS says that this server sets the request's TOS per stream
	// (spec.Spec.StreamTOS) on its data sockets. A server before the
	// field ignores the request's list and would leave its sockets
	// unmarked, so a client that sent one refuses an acceptance without
	// it before any data connection.
	StreamTOS bool `json:"stream_tos,omitempty"`
}

// Error is a refusal or an abort, with a reason for the user.
type Error struct {
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// StreamsReady tells the client that every data connection arrived, with
// the server's socket options as the kernel granted them.
type StreamsReady struct {
	Streams []ServerStream `json:"streams"`
}

// ServerStream is the server's side of one data connection.
type ServerStream struct {
	ID         int           `json:"id"`
	LocalAddr  string        `json:"local_addr"`
	RemoteAddr string        `json:"remote_addr"`
	Socket     result.Socket `json:"socket"`
}

// Start begins the measured part of the test.
type Start struct{}

// Stop ends it early or on time; the reason is for the server's log.
type Stop struct {
	Reason string `json:"reason"`
}

// SenderDone says an end's senders have all stopped, and how much each
// sent: datagrams for UDP, bytes for TCP. A UDP receiver needs the count
// to know what was lost at the tail.
type SenderDone struct {
	Sent map[int]int64 `json:"sent"`
}

// ClockRequest asks the server for its clock, NTP style: T1 is the
// client's wall clock when it sent the request, in ns since the Unix
// epoch. Request-response tests send a few before they start, so that
// one-way delays can be labelled with the clock offset and its error
// bound.
type ClockRequest struct {
	T1 int64 `json:"t1"`
}

// ClockReply echoes T1 with the server's wall clock when the request
// arrived (T2) and when the reply left (T3). The client notes T4 on
// arrival; stats.EstimateOffset turns the four into an offset.
type ClockReply struct {
	T1 int64 `json:"t1"`
	T2 int64 `json:"t2"`
	T3 int64 `json:"t3"`
}

// Challenge opens authentication: a fresh random nonce, so that an answer
// recorded from another connection is no use.
type Challenge struct {
	Nonce []byte `json:"nonce"`
}

// Auth answers a challenge: the user's name, the client's own nonce, and
// an HMAC of both nonces and the name under the user's key. The key never
// travels.
type Auth struct {
	User  string `json:"user"`
	Nonce []byte `json:"nonce"`
	MAC   []byte `json:"mac"`
}

// ServerOutput is the server's report of a test, as its own output shows
// it: text, or a JSON document when the server writes JSON (-J).
type ServerOutput struct {
	Text string          `json:"text,omitempty"`
	JSON json.RawMessage `json:"json,omitempty"`
}

// AuthOK admits the client, and proves that the server holds the key too.
type AuthOK struct {
	MAC []byte `json:"mac"`
}
