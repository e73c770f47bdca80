package logimport

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTallyLineAndErr(t *testing.T) {
	for _, c := range []struct {
		t         Tally
		line, err string
	}{
		{Tally{Files: 1, Runs: 1}, "1 run stored from 1 file (0 imported before, 0 not logs) in db", ""},
		{Tally{Files: 5, Runs: 3, Before: 1, Skipped: 1}, "3 runs stored from 3 files (1 imported before, 1 not a log) in db", ""},
		{Tally{Files: 2, Problems: []error{errors.New("a: bad")}}, "0 runs stored from 1 file (0 imported before, 0 not logs) in db", "a: bad"},
		{Tally{Files: 2, Problems: []error{errors.New("a"), errors.New("b")}}, "0 runs stored from 0 files (0 imported before, 0 not logs) in db", "2 files could not be imported"},
	} {
		if got := c.t.Line("db"); got != c.line {
			t.Errorf("%+v: line %q, want %q", c.t, got, c.line)
		}
		err := c.t.Err()
		if (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("%+v: err %v, want %q", c.t, err, c.err)
		}
	}
}

func TestFilesExpandsDirectoriesInOrder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.json", "a.txt", "sub/c.log"} {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	named := filepath.Join(dir, "a.txt")
	got, err := Files([]string{named, dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []Input{{named, true}, {filepath.Join(dir, "a.txt"), false}, {filepath.Join(dir, "b.json"), false}, {filepath.Join(dir, "sub/c.log"), false}}
	if !slices.Equal(got, want) {
		t.Fatalf("Files: %v, want %v", got, want)
	}
	if _, err := Files([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("a missing path was no error")
	}
}
