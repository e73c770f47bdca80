package group

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// jsonPair is one pair in the -J document. Result is the pair's own -J
// document, as `wireperf client -J` would print it on the sender.
type jsonPair struct {
	Sender   string          `json:"sender"`
	Receiver string          `json:"receiver"`
	Result   json.RawMessage `json:"result"`
	Error    string          `json:"error,omitempty"`
	Partial  bool            `json:"partial,omitempty"`
	Clock    *agent.Offset   `json:"clock,omitempty"`
	// StartOffset is the pair's start minus the common instant, seconds.
	StartOffset *float64 `json:"start_offset_seconds,omitempty"`
	ReceivedBps float64  `json:"received_bits_per_second"`
}

type jsonReport struct {
	Pairs     []jsonPair `json:"pairs"`
	Sum       Sum        `json:"sum"`
	StartSkew Skew       `json:"start_skew"`
	Start     *time.Time `json:"start,omitempty"`
	Error     string     `json:"error,omitempty"`
	Warnings  []string   `json:"warnings,omitempty"`
	Lab       string     `json:"lab,omitempty"`
}

// receivedBps is a result's received rate, both directions added.
func receivedBps(r *result.Result) float64 {
	if r == nil {
		return 0
	}
	var bps float64
	for _, d := range r.Directions() {
		bps += d.Received.BitsPerSecond()
	}
	return bps
}

// WriteJSON writes the report as one JSON document.
func WriteJSON(w io.Writer, rep *Report) error {
	doc := jsonReport{Pairs: []jsonPair{}, Sum: rep.Sum, StartSkew: rep.Skew, Error: rep.Error, Warnings: rep.Warnings, Lab: rep.Lab}
	if doc.Sum.Intervals == nil {
		doc.Sum.Intervals = []SumInterval{}
	}
	if rep.Started {
		doc.Start = &rep.Start
	}
	for _, p := range rep.Pairs {
		jp := jsonPair{Sender: p.Pair.Sender.String(), Receiver: p.Pair.Receiver.String(),
			Result: json.RawMessage("null"), Error: p.Error, Partial: p.Partial, Clock: p.Clock,
			ReceivedBps: receivedBps(p.Result)}
		if p.Result != nil {
			var b bytes.Buffer
			if err := (&emit.JSON{W: &b}).Write(p.Result); err != nil {
				return err
			}
			jp.Result = bytes.TrimSpace(b.Bytes())
		}
		if !p.StartedAt.IsZero() {
			s := p.StartedAt.Sub(rep.Start).Seconds()
			jp.StartOffset = &s
		}
		doc.Pairs = append(doc.Pairs, jp)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "\t")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// WriteText writes the report for a reader: each pair, the aggregate per
// interval and in total, and the start skew.
func WriteText(w io.Writer, rep *Report, f units.Format) error {
	var b bytes.Buffer
	for _, p := range rep.Pairs {
		line := fmt.Sprintf("%-22s → %-22s", p.Pair.Sender, p.Pair.Receiver)
		switch {
		case p.Result != nil:
			line += fmt.Sprintf("  %s received", units.FormatRate(receivedBps(p.Result), f))
		case p.Error == "":
			line += "  not run"
		}
		if p.Clock != nil {
			line += fmt.Sprintf("  clock %+.3f ms ±%.3f", float64(p.Clock.OffsetNs)/1e6, float64(p.Clock.UncertaintyNs)/1e6)
			if p.Clock.AgentClock.Known && !p.Clock.AgentClock.Synced {
				line += " (agent clock not synchronised)"
			}
		}
		if p.Partial {
			line += "  PARTIAL"
		}
		if p.Error != "" {
			line += "  error: " + p.Error
		}
		fmt.Fprintln(&b, line)
	}
	if rep.Started {
		fmt.Fprintln(&b, "[SUM] interval        received")
		for _, iv := range rep.Sum.Intervals {
			suffix := ""
			if iv.Omitted {
				suffix = "  (omitted)"
			}
			fmt.Fprintf(&b, "[SUM] %6.2f-%-6.2f sec  %s%s\n", iv.Start, iv.End, units.FormatRate(iv.ReceivedBitsPerSecond, f), suffix)
		}
		fmt.Fprintf(&b, "[SUM] total            %s over %d pairs\n", units.FormatRate(rep.Sum.ReceivedBitsPerSecond, f), len(rep.Pairs))
		for _, l := range rep.Sum.LeftOut {
			fmt.Fprintf(&b, "[SUM] rows leave out %s\n", l)
		}
		fmt.Fprintf(&b, "start skew %.3f ms ± %.3f ms\n", rep.Skew.Seconds*1e3, rep.Skew.UncertaintySeconds*1e3)
	}
	if rep.Lab != "" {
		fmt.Fprintln(&b, rep.Lab)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(&b, "WARNING: "+w)
	}
	// The error the command exits with is printed by the command once;
	// the report keeps only what its rows don't already say (an
	// interruption, or how many pairs failed), for a report written to a
	// file.
	if rep.Error != "" && !errorInRows(rep) {
		fmt.Fprintln(&b, "group: "+rep.Error)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// errorInRows tells whether the report's error is one pair's error that
// its row already shows.
func errorInRows(rep *Report) bool {
	for _, p := range rep.Pairs {
		if p.Error != "" && strings.HasSuffix(rep.Error, p.Error) && !strings.Contains(rep.Error, "pairs failed") {
			return true
		}
	}
	return false
}
