package yamlfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var testLimits = Limits{Bytes: 1 << 10, Nodes: 50, ValueLen: 16, Depth: 4}

// oneError is err as an *Error, failing the test unless it is one, on
// one line.
func oneError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v (%T): not an *Error", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("more than one line: %q", err)
	}
	return e
}

// Each limit refuses one past it at the node that passes it, naming the
// limit; what is at the limit is taken.
func TestReadLimits(t *testing.T) {
	for _, c := range []struct {
		name, src    string
		line, column int
		key, msg     string
	}{
		{"size", "a: 1\n#" + strings.Repeat("x", 1<<10), 0, 0, "", "1030 bytes, over the limit of 1024"},
		{"value", "a:\n  b: " + strings.Repeat("v", 17) + "\n", 2, 6, "a.b", "a value of 17 bytes, over the limit of 16"},
		{"key", "a:\n  " + strings.Repeat("k", 17) + ": 1\n", 2, 3, "a", "a value of 17 bytes, over the limit of 16"},
		{"nodes", "a: [" + strings.Repeat("1, ", 60) + "1]\n", 1, 146, "a[47]", "more than 50 values, over the limit"},
		{"depth", "a:\n  b:\n    c:\n      - [1]\n", 4, 9, "a.b.c[0]", "nested 5 deep, over the limit of 4"},
		{"alias", "a: &x {b: 1}\nc: *x\n", 2, 4, "c", "aliases (*name) are not taken"},
		{"alias key", "a: &x k\n*x : 1\n", 2, 1, "", "aliases (*name) are not taken"},
		{"duplicate", "a: 1\nb:\n  c: 1\n  c: 2\n", 4, 3, "b.c", "given twice (first on line 3)"},
		{"key a list", "? [a, b]\n: 1\n", 1, 3, "", "a key is a single value, not a mapping or a list"},
		{"syntax", "a: [1,\nb: 2\n", 0, 0, "", "did not find expected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read("f.yaml", []byte(c.src), testLimits)
			e := oneError(t, err)
			if e.File != "f.yaml" || (c.name != "syntax" && (e.Line != c.line || e.Column != c.column)) || e.Key != c.key || !strings.Contains(e.Msg, c.msg) {
				t.Fatalf("%q: at %d:%d key %q, want %d:%d key %q and %q", err, e.Line, e.Column, e.Key, c.line, c.column, c.key, c.msg)
			}
		})
	}
	for name, src := range map[string]string{
		"a value at the limit": "a: " + strings.Repeat("v", 16) + "\n",
		"nested at the limit":  "a:\n  b:\n    c: [1]\n",
		"nodes at the limit":   "a: [" + strings.Repeat("1, ", 46) + "1]\n", // 1 mapping, a key, a list, 47 items
		"an anchor unused":     "a: &x 1\n",
		"the same key apart":   "a: {k: 1}\nb: {k: 1}\n",
	} {
		if _, err := Read("f.yaml", []byte(src), testLimits); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A billion laughs (each level nine aliases of the one before) is
// refused at its first alias, before anything expands it.
func TestReadRefusesAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	_, err := Read("bomb.yaml", []byte(b.String()), Limits{Bytes: 1 << 20, Nodes: 1 << 20, ValueLen: 1024, Depth: 16})
	if e := oneError(t, err); e.Line != 2 || e.Key != "l1[0]" || !strings.Contains(e.Msg, "aliases") {
		t.Fatalf("%v", err)
	}
}

func TestReadEmpty(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "\n\n"} {
		d, err := Read("f.yaml", []byte(src), testLimits)
		if err != nil || d.Root != nil {
			t.Errorf("%q: %v %v, want no document", src, d, err)
		}
	}
}

// A syntax error says its line once, as file:line, on one line.
func TestSyntaxErrorSaysItsLineOnce(t *testing.T) {
	_, err := Read("f.yaml", []byte("a: 1\nb: [\n"), testLimits)
	e := oneError(t, err)
	if e.Line == 0 || strings.Contains(err.Error(), "line") || !strings.HasPrefix(err.Error(), fmt.Sprintf("f.yaml:%d: ", e.Line)) {
		t.Fatalf("%v", err)
	}
}

func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{File: "m.yaml", Line: 12, Column: 3, Msg: `unknown key "foo" (known: a, b)`}, `m.yaml:12:3: unknown key "foo" (known: a, b)`},
		{Error{File: "m.yaml", Line: 12, Column: 3, Key: "tests.t", Msg: "m"}, "m.yaml:12:3: tests.t: m"},
		{Error{File: "m.yaml", Line: 2, Msg: "m"}, "m.yaml:2: m"},
		{Error{File: "m.yaml", Msg: "m"}, "m.yaml: m"},
		{Error{File: "m\x1b[2J.yaml", Line: 1, Column: 1, Key: "a\u202eb", Msg: "m"}, `"m\x1b[2J.yaml":1:1: "a\u202eb": m`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// Mapping with its known keys refuses another at its line and column,
// naming the keys it knows.
func TestMappingUnknownKey(t *testing.T) {
	d, err := Read("f.yaml", []byte("top:\n  a: 1\n  foo: 2\n"), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	top, err := d.Mapping(d.Root, "", "top")
	if err != nil || len(top) != 1 || top[0].Key != "top" {
		t.Fatalf("%v %v", top, err)
	}
	_, err = d.Mapping(top[0].Value, "top", "a", "b")
	if got, want := err.Error(), `f.yaml:3:3: top: unknown key "foo" (known: a, b)`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := d.Mapping(d.Root, "", "top", "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Mapping(top[0].Value.Content[1], "top.a"); err == nil || !strings.HasPrefix(err.Error(), "f.yaml:2:6: top.a: want a mapping") {
		t.Fatalf("%v", err)
	}
	if _, err := d.Scalar(top[0].Value, "top"); err == nil || !strings.HasPrefix(err.Error(), "f.yaml:2:3: top: want a single value") {
		t.Fatalf("%v", err)
	}
}

// The decoder's type errors ("unmarshal errors:" and a "line N:" on each)
// are said as file:line once too, on one line.
func TestTypeErrorSaysItsLineOnce(t *testing.T) {
	d := &Doc{File: "mesh.yaml"}
	te := &yaml.TypeError{Errors: []string{"line 3: cannot unmarshal !!str `x` into int", "line 5: cannot unmarshal !!seq into int"}}
	if got, want := d.syntaxError(te).Error(), "mesh.yaml:3: cannot unmarshal !!str `x` into int; cannot unmarshal !!seq into int (line 5)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if te.Errors[0] != "line 3: cannot unmarshal !!str `x` into int" {
		t.Errorf("the error's own text changed: %q", te.Errors[0])
	}
	if got, want := d.syntaxError(errors.New("yaml: line 2: did not find expected key")).Error(), "mesh.yaml:2: did not find expected key"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
