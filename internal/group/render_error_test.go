package group

import (
	"strings"
	"testing"
)

// A pair's error is on its row; the report repeats only what the rows
// don't say, since the command prints the error it exits with.
func TestTextReportSaysAnErrorOnce(t *testing.T) {
	ab := Pair{Sender: Endpoint{"a", 1}, Receiver: Endpoint{"b", 2}}
	cb := Pair{Sender: Endpoint{"c", 1}, Receiver: Endpoint{"b", 2}}
	refused := "agent a:1: dial tcp a:1: connect: connection refused"
	for _, c := range []struct {
		name      string
		rep       Report
		wantCount int // times the error's detail appears
		wantLine  string
	}{
		{"set-up failed", Report{Pairs: []PairReport{{Pair: ab, Error: refused}},
			Error: "group not started: pair a:1→b:2: " + refused}, 1, ""},
		{"one pair failed", Report{Pairs: []PairReport{{Pair: ab, Error: refused}, {Pair: cb}},
			Error: "pair a:1→b:2: " + refused}, 1, ""},
		{"two pairs failed", Report{Pairs: []PairReport{{Pair: ab, Error: refused}, {Pair: cb, Error: "x"}},
			Error: "2 pairs failed; first a:1→b:2: " + refused}, 2, "group: 2 pairs failed"},
		{"interrupted", Report{Pairs: []PairReport{{Pair: ab}}, Error: "interrupted"}, 0, "group: interrupted"},
	} {
		var b strings.Builder
		if err := WriteText(&b, &c.rep, 'a'); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(b.String(), refused); n != c.wantCount {
			t.Errorf("%s: the error appears %d times, want %d:\n%s", c.name, n, c.wantCount, b.String())
		}
		if c.wantLine != "" && !strings.Contains(b.String(), c.wantLine) {
			t.Errorf("%s: no line %q:\n%s", c.name, c.wantLine, b.String())
		}
		if strings.Contains(b.String(), "wireperf group:") {
			t.Errorf("%s: the report prints the command's error line:\n%s", c.name, b.String())
		}
	}
}

// Run through a lab whose router fell behind, the group's report says so,
// in text and in JSON.
func TestReportCarriesTheLabsWarning(t *testing.T) {
	const w = `the lab "wan"'s router fell behind: its output stood idle 1550 ms of the test's 18.6 s (8.3%)`
	rep := Report{Pairs: []PairReport{{Pair: Pair{Sender: Endpoint{"a", 1}, Receiver: Endpoint{"b", 2}}}}, Started: true, Warnings: []string{w},
		Lab: `run through the lab "wan": this host's TCP buffers are stock Linux`}
	var text, js strings.Builder
	if err := WriteText(&text, &rep, 'a'); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "WARNING: "+w) {
		t.Errorf("text lacks the warning:\n%s", text.String())
	}
	if n := strings.Count(text.String(), rep.Lab); n != 1 || !strings.Contains(js.String(), `"lab": "run through the lab`) {
		t.Errorf("the lab's buffers %d times in the text, want once, and in the JSON:\n%s\n%s", n, text.String(), js.String())
	}
	if !strings.Contains(js.String(), `"warnings": [`) || !strings.Contains(js.String(), "stood idle 1550 ms") {
		t.Errorf("JSON lacks the warning:\n%s", js.String())
	}
}
