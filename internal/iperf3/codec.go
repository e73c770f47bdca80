// Package iperf3 speaks iperf3's wire protocol (as iperf 3.12 does), as a
// client against iperf3 servers and as a server for iperf3 clients, and
// turns each test into the same result.Result a native test produces.
//
// The protocol has no written specification; everything here was checked
// against the iperf3 3.12 binary (see the package's tests). In short:
//
//   - The client opens a TCP control connection and sends a 37-byte
//     cookie: 36 characters of [a-z2-7] and a NUL.
//   - The server drives the test with single signed state bytes; the
//     client answers some of them (PARAM_EXCHANGE: its parameters as
//     JSON; CREATE_STREAMS: it opens the data streams) and sends TEST_END
//     when it has finished, then IPERF_DONE at the very end.
//   - JSON travels as a 4-byte big-endian length, then the text.
//   - A TCP data connection starts with the test's cookie. A UDP stream
//     starts with a 4-byte datagram from the client that the server
//     answers with another 4 bytes.
package iperf3

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wireperf/wireperf/internal/iperf3/iperf3wire"
)

// CookieLen is the size of an iperf3 cookie on the wire: 36 characters
// and a terminating NUL.
const CookieLen = 37

// cookieChars are the characters iperf3 makes its cookies of.
const cookieChars = "abcdefghijklmnopqrstuvwxyz234567"

// Cookie identifies one iperf3 test: the control connection and every TCP
// data connection of the test open with it.
type Cookie [CookieLen]byte

// NewCookie returns a random cookie (180 bits of entropy).
func NewCookie() Cookie {
	var c Cookie
	var rnd [CookieLen - 1]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		panic("iperf3: no randomness: " + err.Error())
	}
	for i, b := range rnd {
		c[i] = cookieChars[int(b)%len(cookieChars)] // 256 is a multiple of 32: no bias
	}
	return c
}

// String is the cookie without its NUL, as iperf3 prints it.
func (c Cookie) String() string {
	if i := bytes.IndexByte(c[:], 0); i >= 0 {
		return string(c[:i])
	}
	return string(c[:])
}

// ValidCookie reports whether b is exactly a cookie as iperf3 makes them:
// 36 characters of [a-z2-7], then NUL.
func ValidCookie(b []byte) bool {
	if len(b) != CookieLen || b[CookieLen-1] != 0 {
		return false
	}
	return CookiePrefix(b[:CookieLen-1])
}

// CookiePrefix reports whether b could be the start of an iperf3 cookie:
// every byte is one of [a-z2-7] (a NUL may end a full 36-character run).
// wireperf's own magics are upper-case ASCII and never match, so a server
// can tell the two protocols apart by a connection's first 4 bytes.
func CookiePrefix(b []byte) bool {
	if len(b) == 0 || len(b) > CookieLen {
		return false
	}
	for i, ch := range b {
		if i == CookieLen-1 {
			if ch != 0 {
				return false
			}
			continue
		}
		if !(ch >= 'a' && ch <= 'z' || ch >= '2' && ch <= '7') {
			return false
		}
	}
	return true
}

// State is one of iperf3's control states, a signed byte on the wire
// (package iperf3wire, which the native client uses to tell an iperf3
// server).
type State = iperf3wire.State

// The states iperf3 3.12 sends.
const (
	TestStart       = iperf3wire.TestStart
	TestRunning     = iperf3wire.TestRunning
	TestEnd         = iperf3wire.TestEnd
	ParamExchange   = iperf3wire.ParamExchange
	CreateStreams   = iperf3wire.CreateStreams
	ServerTerminate = iperf3wire.ServerTerminate
	ClientTerminate = iperf3wire.ClientTerminate
	ExchangeResults = iperf3wire.ExchangeResults
	DisplayResults  = iperf3wire.DisplayResults
	IperfStart      = iperf3wire.IperfStart
	IperfDone       = iperf3wire.IperfDone
	AccessDenied    = iperf3wire.AccessDenied
	ServerError     = iperf3wire.ServerError
)

// ParseState decodes a state byte; unknown values are an error.
func ParseState(b byte) (State, error) { return iperf3wire.ParseState(b) }

// WriteState sends one state byte.
func WriteState(w io.Writer, s State) error {
	_, err := w.Write([]byte{stateByte(s)})
	return err
}

// ReadState reads one state byte.
func ReadState(r io.Reader) (State, error) {
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return ParseState(b[0])
}

// MaxMessage caps a JSON message: parameters and results are a few
// hundred bytes per stream. A length over the cap is refused before
// anything is allocated for it (CVE-2023-38403: iperf3 before 3.14 trusted
// a length of 0xffffffff).
const MaxMessage = 1 << 20

// MaxResultsWithOutput caps the results message when the server's whole
// output rides in it (--get-server-output): a long test's JSON is large.
const MaxResultsWithOutput = 64 << 20

// ErrMessageTooBig is a JSON length over the cap.
var ErrMessageTooBig = errors.New("iperf3: JSON message over the size limit")

// WriteJSON sends v as a length-prefixed JSON message in one write.
func WriteJSON(w io.Writer, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("iperf3: encoding JSON: %w", err)
	}
	buf := make([]byte, 4+len(js))
	binary.BigEndian.PutUint32(buf, uint32(len(js)))
	copy(buf[4:], js)
	_, err = w.Write(buf)
	return err
}

// ReadMessage reads one length-prefixed message of at most limit bytes.
// The buffer grows only as bytes arrive, so a lying length costs nothing.
func ReadMessage(r io.Reader, limit int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 {
		return nil, errors.New("iperf3: empty JSON message")
	}
	if uint64(n) > uint64(limit) {
		return nil, fmt.Errorf("%w: peer announced %d bytes, the limit is %d", ErrMessageTooBig, n, limit)
	}
	var buf bytes.Buffer
	buf.Grow(min(int(n), 64<<10))
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadJSON reads one message into v.
func ReadJSON(r io.Reader, limit int, v any) error {
	b, err := ReadMessage(r, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("iperf3: decoding JSON: %w", err)
	}
	return nil
}

// stateByte is a state as its wire byte.
func stateByte(s State) byte { return byte(s) }
