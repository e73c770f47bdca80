// Package resultjson reads wireperf's own JSON output back: a test's -J
// document (iperf3's layout with wireperf's result under "wireperf"), its
// --json-stream lines, an rr -J document and a udpmon -J document.
package resultjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// Kinds of document.
const (
	KindTest   = "test"   // client or server -J, or --json-stream
	KindRR     = "rr"     // rr -J
	KindUDPMon = "udpmon" // udpmon -J
	KindRRUL   = "rrul"   // rrul -J
)

// MaxSize is the largest document read: a long test's TCP_INFO timeline
// is thinned to fit well below it.
const MaxSize = 256 << 20

// Document is what one file held.
type Document struct {
	Kind   string
	Result *result.Result // KindTest and KindRR
	Sweep  *udpmon.Sweep  // KindUDPMon
	RRUL   *result.RRUL   // KindRRUL
}

// ReadFile reads the document in the file at path.
func ReadFile(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// probe is the union of the top-level keys that tell the documents apart.
type probe struct {
	Kind     string          `json:"kind"`
	Result   json.RawMessage `json:"result"`
	Sweep    json.RawMessage `json:"sweep"`
	RRUL     json.RawMessage `json:"rrul"`
	Wireperf *struct {
		Result json.RawMessage `json:"result"`
	} `json:"wireperf"`
	Start json.RawMessage `json:"start"`
	Event string          `json:"event"`
}

// Read reads one document from r.
func Read(r io.Reader) (*Document, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("larger than %d MiB: not a wireperf JSON document", MaxSize>>20)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("empty: want wireperf's -J output")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var first probe
	if err := dec.Decode(&first); err != nil {
		return nil, fmt.Errorf("not wireperf's JSON output: %w", err)
	}
	if first.Event != "" {
		return readStream(data)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON document: want one -J output (or --json-stream lines)")
	}
	switch {
	case first.Kind == KindRR:
		return resultDoc(KindRR, first.Result)
	case first.Kind == KindUDPMon:
		if len(first.Sweep) == 0 {
			return nil, errors.New(`a udpmon document without its "sweep"`)
		}
		var sw udpmon.Sweep
		if err := json.Unmarshal(first.Sweep, &sw); err != nil {
			return nil, fmt.Errorf("udpmon sweep: %w", err)
		}
		return &Document{Kind: KindUDPMon, Sweep: &sw}, nil
	case first.Kind == KindRRUL:
		if len(first.RRUL) == 0 || string(first.RRUL) == "null" {
			return nil, errors.New(`an rrul document without its "rrul"`)
		}
		var r result.RRUL
		if err := json.Unmarshal(first.RRUL, &r); err != nil {
			return nil, fmt.Errorf("rrul run: %w", err)
		}
		return &Document{Kind: KindRRUL, RRUL: &r}, nil
	case first.Wireperf != nil:
		return resultDoc(KindTest, first.Wireperf.Result)
	case first.Start != nil:
		return nil, errors.New(`an iperf3 document without wireperf's "wireperf" object: only wireperf's own -J output can be plotted without the archive`)
	case first.Kind != "":
		return nil, fmt.Errorf("a %q document: want a test's, rr's, udpmon's or rrul's -J output", first.Kind)
	}
	return nil, errors.New("not wireperf's -J output: no \"wireperf\", \"kind\" or \"event\" key")
}

// readStream takes the result from the "wireperf" event of --json-stream.
func readStream(data []byte) (*Document, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxSize)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev struct {
			Event string `json:"event"`
			Data  struct {
				Result json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("--json-stream line: %w", err)
		}
		if ev.Event == "wireperf" {
			return resultDoc(KindTest, ev.Data.Result)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New(`--json-stream without its "wireperf" event: the test did not finish`)
}

func resultDoc(kind string, raw json.RawMessage) (*Document, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("a %s document without wireperf's result", kind)
	}
	var r result.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("wireperf's result: %w", err)
	}
	return &Document{Kind: kind, Result: &r}, nil
}
