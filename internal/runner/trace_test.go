package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/trace"
)

// A trace's JSON document holds its path or, when it could not run (not
// root, say), its error; the text form names the host's hop.
func TestTraceWritesItsDocument(t *testing.T) {
	cfg := trace.DefaultConfig()
	cfg.MaxHops, cfg.Probes, cfg.ProbeTimeout = 2, 1, 500*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b bytes.Buffer
	err := Trace(ctx, &b, "127.0.0.1", cfg, true)
	var doc trace.Document
	if jerr := json.Unmarshal(b.Bytes(), &doc); jerr != nil {
		t.Fatalf("not one JSON document: %v\n%s", jerr, b.String())
	}
	if err != nil {
		if doc.Error != err.Error() || doc.Trace != nil {
			t.Fatalf("the run failed (%v) but the document says %+v", err, doc)
		}
		t.Skipf("trace could not run here: %v", err)
	}
	if doc.Trace == nil || len(doc.Trace.Hops) == 0 || !doc.Trace.Reached {
		t.Fatalf("a trace to 127.0.0.1 did not reach it: %+v", doc)
	}
	b.Reset()
	if err := Trace(ctx, &b, "127.0.0.1", cfg, false); err != nil || !strings.Contains(b.String(), "127.0.0.1") {
		t.Fatalf("text: %v\n%s", err, b.String())
	}
}
