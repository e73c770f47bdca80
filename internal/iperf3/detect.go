package iperf3

import "time"

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

// cookieAfter makes the cookie a control connection announces when sent
// (fewer than 37 bytes) already went out on it: sent, then random cookie
// characters, then NUL. iperf3 compares a data connection's cookie with
// the control connection's, so data connections must send these same 37
// bytes; they need not all be cookie characters.
func cookieAfter(sent []byte) Cookie {
	c := NewCookie()
	copy(c[:], sent[:min(len(sent), CookieLen-1)])
	return c
}
