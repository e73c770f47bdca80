package iperf3

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
