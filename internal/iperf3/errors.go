package iperf3

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrBusy is a server that runs another test (ACCESS_DENIED).
var ErrBusy = errors.New("iperf3 server is busy running another test")

// BusyError names the busy server; errors.Is(err, ErrBusy) holds.
type BusyError struct{ Addr string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("iperf3 server %s is busy running another test", e.Addr)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// ErrNotIperf3 is a peer that did not answer as an iperf3 server does.
var ErrNotIperf3 = errors.New("the server did not answer as an iperf3 server does")

// RemoteError is iperf3's SERVER_ERROR: the server's error code (its
// i_errno) and the system errno behind it.
type RemoteError struct {
	Code, Errno int32
	// AnswersCredentials: the error came in answer to parameters that
	// carried our credentials.
	AnswersCredentials bool
}

func (e *RemoteError) Error() string {
	if e.Code == errCodeAuth {
		// iperf3's errno beside it is the code again: nothing to add.
		return fmt.Sprintf("the iperf3 server refused the test: test authorization failed (its error code %d: user, password or key not the server's, or clocks further apart than its --time-skew-threshold)", e.Code)
	}
	msg := fmt.Sprintf("the iperf3 server failed the test (its error code %d", e.Code)
	if e.Errno != 0 {
		msg += fmt.Sprintf(", errno %d", e.Errno)
	}
	msg += ")"
	if e.AnswersCredentials {
		// 3.21's server refuses credentials without setting its error
		// code: it sends the one its previous test left, or hangs up.
		msg += " in answer to our credentials: most likely test authorization failed (iperf3 3.21's server reports a refused login with an error code left over from its previous test)"
	}
	return msg
}

// readServerError reads the error code that follows SERVER_ERROR and
// the errno when it comes: iperf3 3.12's server sends
// only the code when it refuses credentials, then hangs up.
func readServerError(r io.Reader) error {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return &RemoteError{Code: -1}
	}
	e := &RemoteError{Code: int32(binary.BigEndian.Uint32(b[:]))}
	if _, err := io.ReadFull(r, b[:]); err == nil {
		e.Errno = int32(binary.BigEndian.Uint32(b[:]))
	}
	return e
}
