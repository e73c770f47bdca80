// Package yamlfile reads the YAML files wireperf is given (mesh,
// campaign and group files, the daemon's configuration) under limits on
// their size, values, nesting, aliases and keys, with every mistake an
// *Error that names the file, the line and the column.
//
// A file is hostile input: it is refused, in one line, before anything
// is built from it when it is over its size, has more nodes than its
// limit, a value over its length, mappings and lists nested deeper than
// its limit, an alias (a small file of aliases can stand for a huge
// one), or a key given twice in one mapping.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits bound what one file may hold. Each kind of file has its own.
type Limits struct {
	Bytes    int // the file's size
	Nodes    int // keys, values and list items
	ValueLen int // bytes of any one key or value
	Depth    int // mappings and lists inside one another
}

// Error is a mistake in a file: where it is and what it is. Line and
// Column count from 1; 0 is unknown (the file as a whole, or a position
// the decoder gave as a line only). Key is the path of the key it is
// about ("hosts.a.port", "pairs[0].parallel"), or empty.
type Error struct {
	File         string
	Line, Column int
	Key          string
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(printable(e.File))
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(printable(e.Key) + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors are several mistakes found in one pass (Doc.Decode's), said on
// one line; errors.As finds the first *Error.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap is the mistakes, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// printable is s, quoted with its escapes when it holds what a terminal
// would act on (control and format characters, bytes that aren't UTF-8):
// an error about a name must not print it raw.
func printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Doc is a file read and checked against its limits.
type Doc struct {
	File string
	// Root is the document's top node; nil when the file holds no
	// document (empty, or only comments).
	Root *yaml.Node
}

// ReadFile reads the file at path, no more of it than lim allows, and
// checks it as Read does.
func ReadFile(path string, lim Limits) (*Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(lim.Bytes)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > lim.Bytes { // what it holds past the limit is not read
		return nil, &Error{File: path, Msg: fmt.Sprintf("over the limit of %d bytes", lim.Bytes)}
	}
	return Read(path, data, lim)
}

// Read parses the first document of data, named file in errors, and
// checks it against lim. Any error is an *Error.
func Read(file string, data []byte, lim Limits) (*Doc, error) {
	d := &Doc{File: file}
	if len(data) > lim.Bytes {
		return nil, &Error{File: file, Msg: fmt.Sprintf("%d bytes, over the limit of %d", len(data), lim.Bytes)}
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return d, nil
		}
		return nil, d.syntaxError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return d, nil
	}
	c := checker{doc: d, lim: lim}
	if err := c.walk(doc.Content[0], 1); err != nil {
		return nil, err
	}
	d.Root = doc.Content[0]
	return d, nil
}

type checker struct {
	doc   *Doc
	lim   Limits
	nodes int
	// path is where the walk is: each a key, or a list's index; said as
	// a string only in an error, so a good file costs no strings.
	path []step
}

type step struct {
	key   string
	index int // a list item's; -1 for a key
}

// key is the path walked to, as an Error's Key says it.
func (c *checker) key() string {
	var b strings.Builder
	for _, s := range c.path {
		switch {
		case s.index >= 0:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + s.key)
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func (c *checker) errorf(n *yaml.Node, format string, args ...any) error {
	return c.doc.Errorf(n, c.key(), format, args...)
}

// walk checks n, nested depth collections deep, and what it holds.
func (c *checker) walk(n *yaml.Node, depth int) error {
	if c.nodes++; c.nodes > c.lim.Nodes {
		return c.errorf(n, "more than %d values, over the limit", c.lim.Nodes)
	}
	if n.Kind == yaml.AliasNode {
		return c.errorf(n, "aliases (*name) are not taken")
	}
	if len(n.Value) > c.lim.ValueLen {
		return c.errorf(n, "a value of %d bytes, over the limit of %d", len(n.Value), c.lim.ValueLen)
	}
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode {
		return nil
	}
	if depth > c.lim.Depth {
		return c.errorf(n, "nested %d deep, over the limit of %d", depth, c.lim.Depth)
	}
	if n.Kind == yaml.SequenceNode {
		for i, item := range n.Content {
			c.path = append(c.path, step{index: i})
			if err := c.walk(item, depth+1); err != nil {
				return err
			}
			c.path = c.path[:len(c.path)-1]
		}
		return nil
	}
	var first map[string]int // each key's line, made only for mappings of several keys
	if len(n.Content) > 2 {
		first = make(map[string]int, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		// The key first: its length before it is part of a path.
		if err := c.walk(k, depth+1); err != nil {
			return err
		}
		if k.Kind != yaml.ScalarNode {
			return c.errorf(k, "a key is a single value, not a mapping or a list")
		}
		c.path = append(c.path, step{key: k.Value, index: -1})
		if line, twice := first[k.Value]; twice {
			return c.errorf(k, "given twice (first on line %d)", line)
		}
		if first != nil {
			first[k.Value] = k.Line
		}
		if err := c.walk(v, depth+1); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
	}
	return nil
}

// Join is the path of key sub inside key ("tests" and "t": "tests.t").
func Join(key, sub string) string {
	if key == "" {
		return sub
	}
	return key + "." + sub
}

// Errorf is an *Error at n (the file as a whole when n is nil) about key.
func (d *Doc) Errorf(n *yaml.Node, key, format string, args ...any) error {
	e := &Error{File: d.File, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// syntaxError is the decoder's error as an *Error: its "line N:" prefix
// (on each of a TypeError's problems) becomes the Error's line, said
// once, and the rest one line.
func (d *Doc) syntaxError(err error) error {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = slices.Clone(te.Errors)
	}
	line := 0
	for i, msg := range msgs {
		n, rest := cutLine(msg)
		if n > 0 {
			if i == 0 {
				line = n
			} else {
				rest = fmt.Sprintf("%s (line %d)", rest, n)
			}
		}
		msgs[i] = strings.ReplaceAll(strings.TrimSpace(rest), "\n", "; ")
	}
	return &Error{File: d.File, Line: line, Msg: strings.Join(msgs, "; ")}
}

// cutLine splits the decoder's "line N: what" into N and what (0 and msg
// when it has no line).
func cutLine(msg string) (int, string) {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(msg), "line "); ok {
		if num, after, ok := strings.Cut(rest, ":"); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return n, strings.TrimSpace(after)
			}
		}
	}
	return 0, msg
}

// Entry is one key of a mapping and its value.
type Entry struct {
	Key            string
	KeyNode, Value *yaml.Node
}

// Mapping lists the entries of the mapping n, at key path key, in the
// file's order. Given known, a key not among them is an error that names
// them. (Read has refused keys given twice.)
func (d *Doc) Mapping(n *yaml.Node, key string, known ...string) ([]Entry, error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.Errorf(n, key, "want a mapping")
	}
	out := make([]Entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if len(known) > 0 && !slices.Contains(known, k.Value) {
			return nil, d.Unknown(k, key, known)
		}
		out = append(out, Entry{k.Value, k, n.Content[i+1]})
	}
	return out, nil
}

// Unknown is the error for key node k, in the mapping at key path key,
// that isn't one of known.
func (d *Doc) Unknown(k *yaml.Node, key string, known []string) error {
	return d.Errorf(k, key, "unknown key %s (known: %s)", strconv.Quote(k.Value), strings.Join(known, ", "))
}

// Scalar is n's value, when n is a single value.
func (d *Doc) Scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.Errorf(n, key, "want a single value")
	}
	return n.Value, nil
}

// Top is the value of key in the document's top mapping, where an error
// about it points; nil (the file as a whole) when the file doesn't give
// it.
func (d *Doc) Top(key string) *yaml.Node {
	if d.Root == nil || d.Root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(d.Root.Content); i += 2 {
		if d.Root.Content[i].Value == key {
			return d.Root.Content[i+1]
		}
	}
	return nil
}
