package emit

import (
	"encoding/json"
	"io"

	"github.com/wireperf/wireperf/internal/result"
)

// RRJSON writes a request-response test as one JSON document: the whole
// result, both ends' views, with each point's percentiles and its full
// RTT and network-RTT histograms (non-empty buckets, µs).
type RRJSON struct {
	W io.Writer
}

// rrDocument is the JSON layout: a kind, so a reader can tell it from
// the iperf3-style documents of bulk tests, and the result.
type rrDocument struct {
	Kind   string         `json:"kind"` // "rr"
	Result *result.Result `json:"result"`
}

// Write renders a finished rr test.
func (j *RRJSON) Write(r *result.Result) error {
	b, err := json.MarshalIndent(rrDocument{Kind: "rr", Result: jsonSafe(r)}, "", "  ")
	if err != nil {
		return err
	}
	_, err = j.W.Write(append(b, '\n'))
	return err
}
