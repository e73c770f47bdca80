package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lab whose router is not running is listed as such; with no lab up
// the list says so.
// (A running router needs root and namespaces: the command's lab test
// checks that line.)
func TestWriteList(t *testing.T) {
	old := StateDir
	StateDir = t.TempDir()
	t.Cleanup(func() { StateDir = old })
	var b strings.Builder
	if err := WriteList(&b); err != nil || b.String() != "no labs are up\n" {
		t.Fatalf("no labs: %q, %v", b.String(), err)
	}
	b.Reset()
	for _, name := range []string{"wan", "lan"} {
		if err := os.WriteFile(filepath.Join(StateDir, "lab-"+name+".json"), []byte(`{"name":"`+name+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteList(&b); err != nil || b.String() != "lan\trouter not running\nwan\trouter not running\n" {
		t.Errorf("two labs, no routers: %q, %v", b.String(), err)
	}
}
