package ping

import (
	"fmt"
	"io"
)

// Document is ping's JSON output: {"ping": result}, or {"error": why}.
type Document struct {
	Ping  *Result `json:"ping,omitempty"`
	Error string  `json:"error,omitempty"`
}

// WriteText writes the result as ping's summary does: what was sent and
// answered, the loss, then the RTTs in ms.
func WriteText(w io.Writer, r Result) error {
	raw := ""
	if r.Raw {
		raw = ", raw socket"
	}
	_, err := fmt.Fprintf(w, "ping %s (%s), %d bytes of data%s\n%d sent, %d received, %d duplicates, %.1f%% loss, TTL %d (%d changes)\n",
		r.Target, r.Addr, r.Size, raw, r.Sent, r.Received, r.Duplicates, r.LossPercent, r.TTL, r.TTLChanges)
	if err != nil || r.RTT.Count == 0 {
		return err
	}
	p := r.RTT
	_, err = fmt.Fprintf(w, "rtt ms: min %.3f, mean %.3f, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f\n",
		p.Min/1e3, p.Mean/1e3, p.P50/1e3, p.P90/1e3, p.P99/1e3, p.Max/1e3)
	return err
}
