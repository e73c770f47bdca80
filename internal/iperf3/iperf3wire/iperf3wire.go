// Package iperf3wire is what a native client needs to tell an iperf3
// server: iperf3's control state bytes, and how such a server answers
// wireperf's greeting. Package iperf3 speaks the rest of the protocol;
// package session uses this one alone, so that it need not import it.
package iperf3wire

import (
	"fmt"
	"time"
)

// State is one of iperf3's control states, a signed byte on the wire.
type State int8

// The states iperf3 3.12 sends.
const (
	TestStart       State = 1
	TestRunning     State = 2
	TestEnd         State = 4
	ParamExchange   State = 9
	CreateStreams   State = 10
	ServerTerminate State = 11
	ClientTerminate State = 12
	ExchangeResults State = 13
	DisplayResults  State = 14
	IperfStart      State = 15
	IperfDone       State = 16
	AccessDenied    State = -1
	ServerError     State = -2
)

var stateNames = map[State]string{
	TestStart: "TEST_START", TestRunning: "TEST_RUNNING", TestEnd: "TEST_END",
	ParamExchange: "PARAM_EXCHANGE", CreateStreams: "CREATE_STREAMS",
	ServerTerminate: "SERVER_TERMINATE", ClientTerminate: "CLIENT_TERMINATE",
	ExchangeResults: "EXCHANGE_RESULTS", DisplayResults: "DISPLAY_RESULTS",
	IperfStart: "IPERF_START", IperfDone: "IPERF_DONE",
	AccessDenied: "ACCESS_DENIED", ServerError: "SERVER_ERROR",
}

// Known reports whether s is a state iperf3 uses.
func (s State) Known() bool { _, ok := stateNames[s]; return ok }

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("state(%d)", int8(s))
}

// ParseState decodes a state byte; unknown values are an error.
func ParseState(b byte) (State, error) {
	s := State(int8(b))
	if !s.Known() {
		return s, fmt.Errorf("iperf3: unknown state byte %d", int8(b))
	}
	return s, nil
}

// How an iperf3 server answers wireperf's native greeting. Observed with
// iperf3 3.12 on Linux, after a client sends the 8-byte greeting "WPRC",
// u16 version 1, u16 0, and then waits:
//
//   - An idle server says nothing. It reads a 37-byte cookie and waits for
//     the other 29 bytes without a timeout (over 20 s observed). If the
//     client gives up and closes, the server takes the 8 bytes for a short
//     cookie, sends PARAM_EXCHANGE (9), fails to read parameters, logs
//     "unable to receive parameters from client" — and `iperf3 -s -1`
//     exits, so a probe that hangs up spoils a one-shot server.
//   - A busy server (running another test) answers at once with the one
//     byte 0xff (ACCESS_DENIED) and closes; the unread greeting makes the
//     close a reset.
//
// A wireperf server answers the greeting at once with "WPRS". So the
// native client should, after sending its greeting:
//
//  1. wait for the reply for ProbeWait(rtt) (rtt: how long the TCP
//     connect took);
//  2. if bytes arrive and LooksLikeIperf3Reply says so, the peer is a busy
//     iperf3 server: close, say "HOST:PORT is an iperf3 server; switching
//     to iperf3 mode", and call RunClient (which reports the busy server,
//     or waits for it with RetryBusy);
//  3. if nothing arrives in time, the peer is most likely an idle iperf3
//     server: say the same line and call RunClientOn with the connection
//     and the 8 greeting bytes. It completes the cookie on the same
//     connection, so the server's test is not spoiled; if the peer then
//     does not answer as iperf3 does, it returns ErrNotIperf3 and the
//     connection is useless (close it and report the server as silent).

// ProbeWait is how long a native client should wait for a wireperf
// server's greeting before taking the silence for an idle iperf3 server.
func ProbeWait(rtt time.Duration) time.Duration {
	return max(time.Second, 4*rtt)
}

// LooksLikeIperf3Reply reports whether the first bytes a server sent in
// answer to wireperf's native greeting come from an iperf3 server: a
// single state byte, in practice ACCESS_DENIED (0xff) from a busy one.
// A wireperf server's answer starts with 'W' and never matches.
func LooksLikeIperf3Reply(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	s := State(int8(b[0]))
	return s.Known()
}
