package runner

import (
	"context"
	"encoding/json"
	"io"

	"github.com/wireperf/wireperf/internal/trace"
)

// Trace discovers the path to host and writes it to w: one JSON document
// (trace.Document, its error inside it too) when asJSON, else the text a
// traceroute user reads. The error is the trace's, or the write's.
func Trace(ctx context.Context, w io.Writer, host string, cfg trace.Config, asJSON bool) error {
	r, err := trace.Run(ctx, host, cfg)
	if asJSON {
		doc := trace.Document{Trace: &r}
		if err != nil {
			doc = trace.Document{Error: err.Error()}
		}
		if werr := json.NewEncoder(w).Encode(doc); err == nil {
			err = werr
		}
		return err
	}
	if err != nil {
		return err
	}
	return trace.WriteText(w, r)
}
