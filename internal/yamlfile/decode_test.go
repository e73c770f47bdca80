package yamlfile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type options struct {
	Time     *string `yaml:"time"`
	Parallel *int    `yaml:"parallel"`
}

type pair struct {
	Sender  string `yaml:"sender"`
	options `yaml:",inline"`
}

type config struct {
	Name    string   `yaml:"name"`
	Port    *int     `yaml:"port"`
	Allow   []string `yaml:"allow"`
	Pairs   []pair   `yaml:"pairs"`
	Inner   *pair    `yaml:"inner"`
	Skipped string   `yaml:"-"`
	Plain   int
	options `yaml:",inline"`
}

var decodeLimits = Limits{Bytes: 1 << 16, Nodes: 1000, ValueLen: 1024, Depth: 8}

func decode(t *testing.T, src string) (config, error) {
	t.Helper()
	d, err := Read("c.yaml", []byte(src), decodeLimits)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var c config
	return c, d.Decode(&c)
}

func TestDecode(t *testing.T) {
	c, err := decode(t, "name: x\nport: 5\nallow: [a, b]\ntime: 3s\nplain: 7\npairs:\n  - sender: s\n    parallel: 2\n  - {sender: t}\ninner: {sender: u}\n")
	if err != nil {
		t.Fatal(err)
	}
	two, three := 2, "3s"
	want := config{Name: "x", Port: &[]int{5}[0], Allow: []string{"a", "b"}, Plain: 7, options: options{Time: &three},
		Pairs: []pair{{Sender: "s", options: options{Parallel: &two}}, {Sender: "t"}}, Inner: &pair{Sender: "u"}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	// As the yaml package: null leaves a value unset, "<<" lays a
	// mapping's keys in.
	if c, err := decode(t, "name: ~\nport:\npairs:\n<<: {name: m}\n"); err != nil || c.Name != "m" || c.Port != nil || c.Pairs != nil {
		t.Fatalf("%+v %v", c, err)
	}
	if c, err := decode(t, ""); err != nil || !reflect.DeepEqual(c, config{}) {
		t.Fatalf("an empty file: %+v %v", c, err)
	}
}

// Every unknown key and every value that doesn't fit is named at its
// line and column, all of them on one line; an unknown key names the
// keys its mapping knows, the struct's (its inline struct's too).
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"name: x\nbogus: 1\n", `c.yaml:2:1: unknown key "bogus" (known: name, port, allow, pairs, inner, plain, time, parallel)`},
		{"pairs:\n  - sender: s\n    colour: red\n", `c.yaml:3:5: pairs[0]: unknown key "colour" (known: sender, time, parallel)`},
		{"port: abc\nallow: x\n", "c.yaml:1:7: port: cannot unmarshal !!str `abc` into int; c.yaml:2:8: allow: cannot unmarshal !!str `x` into []string"},
		{"pairs: {a: 1}\n", "c.yaml:1:8: pairs: want a list"},
		{"inner: [1]\n", "c.yaml:1:8: inner: want a mapping"},
		{"- 1\n", "c.yaml:1:1: want a mapping"},
		{"Skipped: 1\n", `c.yaml:1:1: unknown key "Skipped"`},
	} {
		_, err := decode(t, c.src)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n") || strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: %v, want %s", c.src, err, c.want)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Line == 0 || e.Column == 0 {
			t.Errorf("%q: %v: no *Error with a position", c.src, err)
		}
	}
	// The count of problems said is bounded.
	_, err := decode(t, strings.Repeat("port: x\n", 1)+"pairs:\n"+strings.Repeat("  - {sender: [1]}\n", 50))
	var es Errors
	if !errors.As(err, &es) || len(es) != maxProblems {
		t.Fatalf("%d problems: %v", len(es), err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("a: 1\n"+strings.Repeat("#", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big, Limits{Bytes: 50, Nodes: 10, ValueLen: 10, Depth: 2}); err == nil || err.Error() != big+": over the limit of 50 bytes" {
		t.Fatalf("%v", err)
	}
	if d, err := ReadFile(big, Limits{Bytes: 200, Nodes: 10, ValueLen: 10, Depth: 2}); err != nil || d.Root == nil || d.File != big {
		t.Fatalf("%v %v", d, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none.yaml"), decodeLimits); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%v", err)
	}
}

// Whatever the bytes, Read and Decode return, and every error is one
// line with an *Error in it.
func FuzzRead(f *testing.F) {
	f.Add([]byte("name: x\npairs:\n  - sender: s\n    parallel: 2\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Add([]byte("? [a]\n: 1\n<<: {name: y}\n"))
	f.Add([]byte("pairs: [{sender: [[[[1]]]]}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Read("f.yaml", b, decodeLimits)
		if err == nil {
			var c config
			err = d.Decode(&c)
		}
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("not a one-line *Error: %q", err)
		}
	})
}
