package trace

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// envUnprivileged marks the child that TestRunWithoutPrivilege starts
// as an unprivileged user.
const envUnprivileged = "WIREPERF_TRACE_TEST_UNPRIVILEGED"

// Without root or CAP_NET_RAW, a trace over UDP reaches loopback all the
// same (it reads its socket's error queue), and one with Raw fails at
// once with one line that says what it needs. As root, the test runs
// itself again as nobody.
func TestRunWithoutPrivilege(t *testing.T) {
	if os.Geteuid() != 0 {
		cfg := DefaultConfig()
		cfg.MaxHops, cfg.Probes = 3, 2
		r, err := Run(context.Background(), "127.0.0.1", cfg)
		if err != nil || !r.Reached || len(r.Hops) != 1 || r.Hops[0].Addr != "127.0.0.1" {
			t.Fatalf("unprivileged UDP trace to loopback: %v, %+v", err, r)
		}
		cfg.Raw = true
		_, err = Run(context.Background(), "127.0.0.1", cfg)
		if err == nil {
			t.Skip("this user may open raw sockets (CAP_NET_RAW)")
		}
		if msg := err.Error(); !strings.Contains(msg, "root or CAP_NET_RAW") || strings.Contains(msg, "\n") {
			t.Fatalf("error %q: want one line naming root and CAP_NET_RAW", msg)
		}
		return
	}
	if os.Getenv(envUnprivileged) != "" {
		t.Fatal("still root after dropping to nobody")
	}
	// The test binary lives in a directory only root may enter: a copy
	// goes where nobody can run it.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // the test's directory and this one
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "trace.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestRunWithoutPrivilege$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envUnprivileged+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRunWithoutPrivilege") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
