package yamlfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/group"
	"github.com/wireperf/wireperf/internal/mesh"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// kind is one kind of file read through yamlfile: a file of its that is
// good, a key it takes a long value in, and how it is read.
type kind struct {
	name   string
	good   string // ends in a newline; its lines come before any added
	valKey string
	limits yamlfile.Limits
	read   func(path string) error
}

func readBytes(parse func(name string, data []byte) error) func(string) error {
	return func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return parse(path, data)
	}
}

var kinds = []kind{
	{"mesh", "hosts: {a: , b: }\n", "name", mesh.Limits, readBytes(func(name string, data []byte) error {
		_, err := mesh.Parse(name, data)
		return err
	})},
	{"campaign", "name: x\ntarget: h\n", "order", campaign.FileLimits, readBytes(func(name string, data []byte) error {
		_, err := campaign.ParseFile(name, data)
		return err
	})},
	{"group", "pairs:\n  - sender: 127.0.0.1\n    receiver: 127.0.0.2\n", "start-in", group.FileLimits, func(path string) error {
		_, err := group.ReadFile(path)
		return err
	}},
	{"daemon config", "host: a\n", "db", daemon.ConfigLimits, func(path string) error {
		_, err := daemon.ReadConfig(path)
		return err
	}},
}

// Each limit of the reader holds for each kind of file: one past it is
// refused in one line at its line and column (the file as a whole for
// its size), and an unknown key is named with the keys the file knows.
func TestEveryKindHasTheLimits(t *testing.T) {
	type limitCase struct {
		name string
		add  func(k kind) string // appended to the good file
		// line is where the error is, counted from the first line added
		// (0: the file as a whole); col its column (-1: any but 0).
		line, col int
		msg       func(k kind) string
	}
	cases := []limitCase{
		{"size", func(k kind) string { return "#" + strings.Repeat("x", k.limits.Bytes) + "\n" }, 0, 0,
			func(k kind) string { return fmt.Sprintf("over the limit of %d", k.limits.Bytes) }},
		{"value", func(k kind) string { return k.valKey + ": " + strings.Repeat("v", k.limits.ValueLen+1) + "\n" }, 1, -1,
			func(k kind) string {
				return fmt.Sprintf("%s: a value of %d bytes, over the limit of %d", k.valKey, k.limits.ValueLen+1, k.limits.ValueLen)
			}},
		{"nodes", func(k kind) string { return "zz: [" + strings.Repeat("1,", k.limits.Nodes) + "1]\n" }, 1, -1,
			func(k kind) string { return fmt.Sprintf("more than %d values, over the limit", k.limits.Nodes) }},
		{"depth", func(k kind) string {
			return "zz: " + strings.Repeat("[", k.limits.Depth) + "1" + strings.Repeat("]", k.limits.Depth) + "\n"
		}, 1, -1, func(k kind) string {
			return fmt.Sprintf("nested %d deep, over the limit of %d", k.limits.Depth+1, k.limits.Depth)
		}},
		{"alias", func(kind) string { return "zz: &a 1\nzy: *a\n" }, 2, 5,
			func(kind) string { return "zy: aliases (*name) are not taken" }},
		{"alias bomb", func(kind) string {
			return "zz: &a [1, 1, 1, 1, 1, 1, 1, 1]\nzy: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nzx: [*b, *b, *b, *b, *b, *b, *b, *b]\n"
		}, 2, 9, func(kind) string { return "zy[0]: aliases (*name) are not taken" }},
		{"duplicate key", func(kind) string { return "zz: 1\nzz: 2\n" }, 2, 1,
			func(kind) string { return "zz: given twice (first on line" }},
		{"unknown key", func(kind) string { return "colour: red\n" }, 1, 1,
			func(kind) string { return `unknown key "colour" (known: ` }},
	}
	dir := t.TempDir()
	for _, k := range kinds {
		path := filepath.Join(dir, strings.ReplaceAll(k.name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(k.good), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := k.read(path); err != nil {
			t.Fatalf("%s: the good file: %v", k.name, err)
		}
		goodLines := strings.Count(k.good, "\n")
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				if err := os.WriteFile(path, []byte(k.good+c.add(k)), 0o600); err != nil {
					t.Fatal(err)
				}
				err := k.read(path)
				var e *yamlfile.Error
				if !errors.As(err, &e) {
					t.Fatalf("%v (%T): not a *yamlfile.Error", err, err)
				}
				msg := err.Error()
				at := path + ": "
				if c.line > 0 {
					at = fmt.Sprintf("%s:%d:", path, goodLines+c.line)
					if c.col > 0 {
						at += fmt.Sprintf("%d: ", c.col)
					}
				}
				if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, at) || !strings.Contains(msg, c.msg(k)) {
					t.Fatalf("%.300q, want one line at %q saying %q", msg, at, c.msg(k))
				}
				if c.line > 0 && e.Column == 0 {
					t.Fatalf("%.300q: no column", msg)
				}
			})
		}
	}
}
