package tcpconnect

import (
	"fmt"
	"io"
)

// Document is tcp-connect's JSON output: {"tcp_connect": result}, or
// {"error": why}.
type Document struct {
	TCPConnect *Result `json:"tcp_connect,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// WriteText writes the result: the counts of each outcome, then the
// handshake times in ms.
func WriteText(w io.Writer, r Result) error {
	_, err := fmt.Fprintf(w, "tcp-connect %s (%s)\n%d attempts, %d connected, %d refused, %d timed out, %d failed\n",
		r.Target, r.Addr, r.Attempts, r.Connected, r.Refused, r.TimedOut, r.Failed)
	if err == nil && r.LastError != "" {
		_, err = fmt.Fprintf(w, "last failure: %s\n", r.LastError)
	}
	if err != nil || r.Connect.Count == 0 {
		return err
	}
	p := r.Connect
	_, err = fmt.Fprintf(w, "connect ms: min %.3f, mean %.3f, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f\n",
		p.Min/1e3, p.Mean/1e3, p.P50/1e3, p.P90/1e3, p.P99/1e3, p.Max/1e3)
	return err
}
