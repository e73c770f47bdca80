package tcpconnect

import (
	"fmt"
	"io"

	"github.com/wireperf/wireperf/internal/result"
)

// Document is tcp-connect's JSON output: {"tcp_connect": result}, or
// {"error": why}.
type Document struct {
	TCPConnect *Result `json:"tcp_connect,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// WriteText writes the result: the counts of each outcome, then the
// handshake times in ms (the kernel's where it timed them), the dial's own
// times, and a HOST DELAY line when the client host delayed dials.
func WriteText(w io.Writer, r Result) error {
	_, err := fmt.Fprintf(w, "tcp-connect %s (%s)\n%d attempts, %d connected, %d refused, %d timed out, %d failed\n",
		r.Target, r.Addr, r.Attempts, r.Connected, r.Refused, r.TimedOut, r.Failed)
	if err == nil && r.LastError != "" {
		_, err = fmt.Fprintf(w, "last failure: %s\n", r.LastError)
	}
	if err != nil || r.Connect.Count == 0 {
		return err
	}
	p, u := r.Connect, r.UserSpace
	what := "handshake ms (the dial's times: the kernel timed none)"
	if r.KernelTimed > 0 {
		what = fmt.Sprintf("handshake ms (the kernel's SYN to SYN-ACK, %d of %d; the dial's for the rest)", r.KernelTimed, r.Connected)
		if r.KernelTimed == r.Connected {
			what = "handshake ms (the kernel's, SYN to SYN-ACK)"
		}
	}
	if _, err = fmt.Fprintf(w, "%s: %s\n", what, msRow(p)); err != nil {
		return err
	}
	if r.KernelTimed > 0 {
		if _, err = fmt.Fprintf(w, "connect ms (the dial, this host's scheduling included): %s\n", msRow(u)); err != nil {
			return err
		}
	}
	if d := r.HostDelay; d != nil {
		_, err = fmt.Fprintln(w, hostDelayLine(*d))
	}
	return err
}

func msRow(p result.Percentiles) string {
	return fmt.Sprintf("min %.3f, mean %.3f, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f",
		p.Min/1e3, p.Mean/1e3, p.P50/1e3, p.P90/1e3, p.P99/1e3, p.Max/1e3)
}

// hostDelayLine says that the client host, not the path, is behind the
// dial's slowest times, in rr's HOST DELAY words.
func hostDelayLine(d HostDelay) string {
	n := "attempts"
	if d.Attempts == 1 {
		n = "attempt"
	}
	without := "every attempt was host-delayed"
	if d.WithoutUs != nil {
		without = fmt.Sprintf("without host-delayed attempts max %.3f ms", *d.WithoutUs/1e3)
	}
	return fmt.Sprintf("HOST DELAY: connect max %.3f ms holds %d %s the %s host delayed, by up to %.3f ms (the dial's return after the kernel's handshake, less the dial's least cost %.3f ms; over %.3f ms is the host's, not the path's); %s",
		d.UserMaxUs/1e3, d.Attempts, n, d.Host, d.ShareUs/1e3, d.DialCostUs/1e3, d.ThresholdUs/1e3, without)
}
