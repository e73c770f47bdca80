package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Fixtures that several tests read are made once, in directories that
// outlive the test that made them; TestMain removes them.
var fixtureDirs struct {
	sync.Mutex
	dirs []string
}

// fixtureDir is a new directory for a shared fixture.
func fixtureDir(name string) (string, error) {
	dir, err := os.MkdirTemp("", "wireperf-cli-"+name+"-")
	if err != nil {
		return "", err
	}
	fixtureDirs.Lock()
	fixtureDirs.dirs = append(fixtureDirs.dirs, dir)
	fixtureDirs.Unlock()
	return dir, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range fixtureDirs.dirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// copyArchive copies the SQLite archive db (with its journal files, if
// any) into t's temporary directory and returns the copy's path.
func copyArchive(t *testing.T, db string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(db))
	matches, err := filepath.Glob(db + "*")
	if err != nil || len(matches) == 0 {
		t.Fatalf("archive %s: %v", db, err)
	}
	for _, src := range matches {
		if err := copyFile(src, dst+strings.TrimPrefix(src, db)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
