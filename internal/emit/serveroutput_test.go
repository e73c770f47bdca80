package emit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wireperf/wireperf/internal/result"
)

// longResult is parallelResult with its rows repeated to n rows a side.
func longResult(n int) *result.Result {
	r := parallelResult()
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		base := e.Intervals
		e.Intervals = make([]result.Interval, n)
		for i := range n {
			iv := base[i%len(base)]
			iv.Index, iv.Start, iv.End = i, float64(i), float64(i+1)
			e.Intervals[i] = iv
		}
	}
	return r
}

// A long test's text stops rendering at the cap, and says it was cut.
func TestServerOutputTextStopsAtItsCap(t *testing.T) {
	const limit = 4096
	out := textWithin(longResult(100_000), 0, limit)
	note := "\n(the server's report was cut here: too long to send)\n"
	if len(out) != limit+len(note) || !strings.HasSuffix(string(out), note) {
		t.Fatalf("%d bytes ending %q: want %d bytes then the note", len(out), out[max(len(out)-80, 0):], limit)
	}
	// A writer past its cap fails, which stops the emitter there.
	w := &cappedBuffer{limit: 10}
	if n, err := w.Write(make([]byte, 25)); n != 10 || err == nil {
		t.Fatalf("a write past the cap: %d, %v", n, err)
	}
	if n, err := w.Write([]byte("x")); n != 0 || err == nil {
		t.Fatalf("a write after the cap: %d, %v", n, err)
	}
	whole := textWithin(parallelResult(), 0, MaxServerOutput)
	if strings.Contains(string(whole), "cut here") || !strings.Contains(string(whole), "Accepted connection") {
		t.Fatalf("a short report was cut:\n%s", whole)
	}
}

// JSON cannot be cut: a document whose rows alone pass the cap is not
// rendered, and a note goes in text; a short one is whole JSON.
func TestServerOutputJSONWithinItsCap(t *testing.T) {
	render := ServerOutput(false)
	out, isJSON := render(longResult(100_000), 0)
	if isJSON || !strings.Contains(string(out), "too long to send") {
		t.Fatalf("JSON of 400,000 stream rows: %d bytes, JSON %v", len(out), isJSON)
	}
	out, isJSON = render(parallelResult(), 0)
	if !isJSON || !json.Valid(out) || len(out) > MaxServerOutput {
		t.Fatalf("a short test's JSON: %d bytes, JSON %v", len(out), isJSON)
	}
	// minJSONStreamRow is a floor: every stream row takes more.
	var b bytes.Buffer
	short, long := longResult(10), longResult(1010)
	_ = (&JSON{W: &b}).Write(short)
	n := b.Len()
	b.Reset()
	_ = (&JSON{W: &b}).Write(long)
	if per := (b.Len() - n) / (streamRows(long) - streamRows(short)); per < minJSONStreamRow {
		t.Fatalf("a stream row takes %d bytes of JSON, less than the floor of %d the cap assumes", per, minJSONStreamRow)
	}
}

// A server's report of a test whose rows it kept joined says so.
func TestServerReportSaysRowsWereJoined(t *testing.T) {
	r := parallelResult()
	r.Local.RowsJoined = 4
	var out bytes.Buffer
	rep := &ServerReport{W: &out, Interval: r.Spec.Interval}
	if err := rep.Write("t1", "127.0.0.1:5000", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[t1 127.0.0.1:5000] Rows of up to 4 × 1s: the server keeps a bounded number of rows") {
		t.Fatalf("no note of the joined rows:\n%s", out.String())
	}
}

// A title that a client sends is refused by the spec's check (spec
// TestValidate); one that got into a result anyway (an archive, an
// older peer) prints inert: every line of the server's report, live and
// final, starts with its own test's prefix, and no \r, \n or escape
// sequence reaches the terminal.
func TestTitleCannotForgeAServerReportLine(t *testing.T) {
	const forged = "x\r[t9 6.6.6.6:1] forged\n[t9 6.6.6.6:1] \x1b[2J\x9b2J\xff"
	r := parallelResult()
	r.Spec.Title = forged
	r.ServerOutput = &result.ServerOutput{Text: "a\rb\x1b[31m\n"}
	var out bytes.Buffer
	rep := &ServerReport{W: &out, Interval: r.Spec.Interval}
	live := rep.Live("t1", "127.0.0.1:5000")
	live.Started(r)
	for _, row := range r.IntervalRows()[:2] {
		live.Interval(r, row)
	}
	if err := rep.Write("t1", "127.0.0.1:5000", r); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := Replay(&Text{W: &text}, r); err != nil { // the client's own report
		t.Fatal(err)
	}
	opt := &bytes.Buffer{}
	if err := (&UDPMonTable{W: opt, Opt: Options{Title: forged}}).write("row\n"); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*bytes.Buffer{"server report": &out, "client text": &text, "udpmon table": opt} {
		for line := range strings.Lines(b.String()) {
			if strings.ContainsAny(line, "\r\x1b\u009b") || !utf8.ValidString(line) {
				t.Fatalf("%s: a line carries a control character: %q", name, line)
			}
			if name == "server report" && !strings.HasPrefix(line, "[t1 127.0.0.1:5000] ") {
				t.Fatalf("%s: a line without its test's prefix: %q", name, line)
			}
		}
		if !strings.Contains(b.String(), `x\r[t9 6.6.6.6:1] forged\n[t9 6.6.6.6:1] \x1b[2J\x9b2J\xff:  `) {
			t.Fatalf("%s: the title is not printed escaped:\n%s", name, b.String())
		}
	}
}
