package emit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSONStreamFullOutput checks --json-stream-full-output: the stream's
// lines, each one event, and after the end event one -J document, whose
// end (its totals) is the end event's data, and which is the document -J
// writes alone.
func TestJSONStreamFullOutput(t *testing.T) {
	for name, r := range map[string]func() []byte{
		"forward": func() []byte { return fullStream(t, false) },
		"bidir":   func() []byte { return fullStream(t, true) },
	} {
		t.Run(name, func(t *testing.T) {
			out := r()
			rd := bufio.NewReader(bytes.NewReader(out))
			var events []string
			var end any
			for end == nil {
				line, err := rd.ReadBytes('\n')
				if err != nil {
					t.Fatalf("the stream ended before its end event: %v\n%s", err, out)
				}
				ev := decodeJSON(t, line)
				kind, _ := ev["event"].(string)
				events = append(events, kind)
				if kind == "end" {
					end = ev["data"]
				}
			}
			if events[0] != "start" || !strings.Contains(strings.Join(events, " "), "interval") {
				t.Errorf("events %v: want start, intervals, ..., end", events)
			}
			var rest bytes.Buffer
			_, _ = rest.ReadFrom(rd)
			dec := json.NewDecoder(bytes.NewReader(rest.Bytes()))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("no JSON document after the end event: %v\n%s", err, rest.Bytes())
			}
			if dec.More() {
				t.Error("more than one document after the end event")
			}
			doc := decodeJSON(t, raw)
			if !reflect.DeepEqual(doc["end"], end) {
				t.Errorf("the document's end\n%v\ndiffers from the end event's data\n%v", doc["end"], end)
			}
			sum := doc["end"].(map[string]any)["sum_sent"].(map[string]any)
			if n, _ := sum["bytes"].(json.Number).Int64(); n <= 0 {
				t.Errorf("sum_sent bytes %v: the totals are empty", sum["bytes"])
			}
			res := forwardResult()
			if name == "bidir" {
				res = bidirResult()
			}
			if want := writeJSON(t, res, Options{}); !reflect.DeepEqual(doc, want) {
				t.Error("the document after the stream differs from -J's")
			}
		})
	}
}

func fullStream(t *testing.T, bidir bool) []byte {
	t.Helper()
	r := forwardResult()
	if bidir {
		r = bidirResult()
	}
	var b bytes.Buffer
	if err := Replay(&JSONStream{W: &b, Full: true}, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestJSONStreamWithoutFull checks that without Full nothing follows the
// end event.
func TestJSONStreamWithoutFull(t *testing.T) {
	var b bytes.Buffer
	if err := Replay(&JSONStream{W: &b}, forwardResult()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if last := decodeJSON(t, []byte(lines[len(lines)-1])); last["event"] != "end" {
		t.Errorf("last line %v: want the end event", last)
	}
}

// TestExtraData checks --extra-data at the -J document's top level, and
// that hostile strings (quotes, control characters, a would-be closing
// brace) stay one JSON string that decodes to what was given.
func TestExtraData(t *testing.T) {
	for _, s := range []string{
		"site=lab-3",
		`"}, "end": {"forged": true}, "x": "`,
		"tab\there\nnewline\r\x00nul\x1b[31mred\u2028sep",
		"<script>&amp;</script>",
		strings.Repeat("é", 2048),
	} {
		r := forwardResult()
		r.Spec.ExtraData = s
		doc := writeJSON(t, r, Options{})
		if got := doc["extra_data"]; got != s {
			t.Errorf("extra_data %q; want %q", got, s)
		}
		if _, forged := doc["end"].(map[string]any)["forged"]; forged {
			t.Errorf("extra_data %q reached the document's structure", s)
		}
		var b bytes.Buffer
		if err := Replay(&JSONStream{W: &b, Full: true}, r); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b.Bytes(), []byte("\x1b")) || bytes.Contains(b.Bytes(), []byte("\x00")) {
			t.Errorf("extra_data %q: a control byte was written raw", s)
		}
	}
	r := forwardResult()
	if _, ok := writeJSON(t, r, Options{})["extra_data"]; ok {
		t.Error("extra_data written without --extra-data")
	}
}
