package labtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// AsNobody returns a copy of the test binary that user nobody may run, in
// a directory of its own (removed when the test ends), and the process
// attributes that run a command as nobody (uid and gid 65534). It is for
// a test, run as root, of what happens without privileges: the build
// directory is private to root, so the binary itself cannot be run.
func AsNobody(t testing.TB) (bin string, attr *syscall.SysProcAttr) {
	t.Helper()
	dir, err := os.MkdirTemp("", "wireperf-labtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, filepath.Base(self))
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}
