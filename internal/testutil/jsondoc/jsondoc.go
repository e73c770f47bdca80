// Package jsondoc reads JSON documents in tests: decoding exactly one
// document, walking it by path, reading its numbers, and comparing its
// shape with a reference document (iperf3's own output, say). Only tests
// import it.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"testing"
)

// Decode decodes exactly one JSON object from data, numbers as
// json.Number so that integers stay exact.
func Decode(t testing.TB, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, data)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("more than one JSON document: %v", err)
	}
	return doc
}

// Kind names a decoded value's JSON type.
func Kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// At walks a decoded document: strings index objects, ints arrays.
func At(t testing.TB, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %s is not an object", path, Kind(v))
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("at %v: no key %q", path, k)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k < 0 || k >= len(a) {
				t.Fatalf("at %v: no element %d", path, k)
			}
			v = a[k]
		default:
			t.Fatalf("at %v: %T is not a path element", path, p)
		}
	}
	return v
}

// Float reads a decoded number.
func Float(t testing.TB, v any) float64 {
	t.Helper()
	switch n := v.(type) {
	case float64:
		return n
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			t.Fatalf("%v is not a number: %v", n, err)
		}
		return f
	}
	t.Fatalf("%v is %s, not a number", v, Kind(v))
	return 0
}

// Int reads a decoded number that must be whole.
func Int(t testing.TB, v any) int64 {
	t.Helper()
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		if err != nil {
			t.Fatalf("%v is not a whole number", n)
		}
		return i
	}
	f := Float(t, v)
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		t.Fatalf("%v is not a whole number", f)
	}
	return int64(f)
}

// IntAt is Int of At.
func IntAt(t testing.TB, v any, path ...any) int64 {
	t.Helper()
	return Int(t, At(t, v, path...))
}

// FloatAt is Float of At.
func FloatAt(t testing.TB, v any, path ...any) float64 {
	t.Helper()
	return Float(t, At(t, v, path...))
}

// MissingKeys lists, sorted, what want has that got lacks or types
// differently: objects key by key, arrays by their first element.
func MissingKeys(path string, want, got any) []string {
	if Kind(want) != Kind(got) {
		return []string{fmt.Sprintf("%s: %s, want %s", path, Kind(got), Kind(want))}
	}
	var out []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, path+"."+k+": missing")
				continue
			}
			out = append(out, MissingKeys(path+"."+k, wv, gv)...)
		}
	case []any:
		g := got.([]any)
		switch {
		case len(w) == 0:
		case len(g) == 0:
			out = append(out, path+": empty array")
		default:
			out = append(out, MissingKeys(path+"[0]", w[0], g[0])...)
		}
	}
	sort.Strings(out)
	return out
}
