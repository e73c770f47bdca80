package jsondoc

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// recorder is a testing.TB that records a fatal failure instead of
// ending the test, so the failure paths can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

// fails reports whether f failed through r.Fatalf.
func fails(t *testing.T, f func(r *recorder)) (msg string) {
	t.Helper()
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		msg = r.failed
	}()
	f(r)
	return ""
}

func TestDecodeAndWalk(t *testing.T) {
	doc := Decode(t, []byte(`{"end":{"streams":[{"bytes":9007199254740993,"jitter_ms":0.017}]}}`))
	if got := IntAt(t, doc, "end", "streams", 0, "bytes"); got != 9007199254740993 {
		t.Errorf("bytes = %d; integers must stay exact", got)
	}
	if got := FloatAt(t, doc, "end", "streams", 0, "jitter_ms"); got != 0.017 {
		t.Errorf("jitter_ms = %v", got)
	}
	var plain map[string]any
	if err := json.Unmarshal([]byte(`{"n":[3]}`), &plain); err != nil {
		t.Fatal(err)
	}
	if got := IntAt(t, plain, "n", 0); got != 3 {
		t.Errorf("float64 3 read as %d", got)
	}
}

func TestFailures(t *testing.T) {
	doc := Decode(t, []byte(`{"a":[1.5],"s":"x"}`))
	for name, f := range map[string]func(r *recorder){
		"two documents": func(r *recorder) { Decode(r, []byte(`{} {}`)) },
		"not JSON":      func(r *recorder) { Decode(r, []byte(`{`)) },
		"no key":        func(r *recorder) { At(r, doc, "b") },
		"no element":    func(r *recorder) { At(r, doc, "a", 1) },
		"not an object": func(r *recorder) { At(r, doc, "s", "x") },
		"not whole":     func(r *recorder) { IntAt(r, doc, "a", 0) },
		"not a number":  func(r *recorder) { Float(r, "x") },
	} {
		if msg := fails(t, f); msg == "" {
			t.Errorf("%s: did not fail", name)
		}
	}
}

func TestMissingKeys(t *testing.T) {
	want := Decode(t, []byte(`{"a":1,"b":{"c":"x","d":[{"e":true}]},"f":[]}`))
	got := Decode(t, []byte(`{"a":"1","b":{"d":[{}]},"f":[],"extra":0}`))
	diff := MissingKeys("doc", want, got)
	expect := []string{"doc.a: string, want number", "doc.b.c: missing", "doc.b.d[0].e: missing"}
	if !slices.Equal(diff, expect) {
		t.Errorf("MissingKeys = %q; want %q", diff, expect)
	}
	if diff := MissingKeys("doc", want, want); len(diff) != 0 {
		t.Errorf("a document differs from itself: %q", diff)
	}
	empty := Decode(t, []byte(`{"a":1,"b":{"c":"x","d":[]},"f":[]}`))
	if diff := MissingKeys("doc", want, empty); !slices.Equal(diff, []string{"doc.b.d: empty array"}) {
		t.Errorf("empty array: %q", diff)
	}
}
