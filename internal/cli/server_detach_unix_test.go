//go:build unix

package cli

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// detachedServer runs `wireperf server -D args...` as a user would (the
// test binary as wireperf) and returns its exit code and stderr.
func detachedServer(t *testing.T, args ...string) (int, string) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(labHelperArgv(t, bin), append([]string{"-s", "-D"}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), labHelperEnv+"="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	timer := time.AfterFunc(90*time.Second, func() { cmd.Process.Kill() }) // a hung start must not hang the test
	defer timer.Stop()
	cmd.Run()
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// -D returns once the background server listens; the server serves a
// test, writes its --pidfile and --logfile, and on SIGTERM removes the
// pidfile and exits.
func TestServerDetached(t *testing.T) {
	dir := t.TempDir()
	pidfile, logfile := filepath.Join(dir, "s.pid"), filepath.Join(dir, "s.log")
	port := strconv.Itoa(loopback.FreePort(t))
	code, stderr := detachedServer(t, "-B", "127.0.0.1", "-p", port, "--pidfile", pidfile, "--logfile", logfile)
	if code != 0 {
		t.Fatalf("server -D: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(pidfile) // written before the notice: there now
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pidfile %q", b)
	}
	proc, _ := os.FindProcess(pid)
	t.Cleanup(func() { proc.Kill() })
	if sid, err := syscall.Getpgid(pid); err != nil || sid != pid {
		t.Errorf("the background server %d leads process group %d (%v), want its own", pid, sid, err)
	}
	// It listens already: a test runs at once, with no retry.
	code, out, errOut := runCLI("-c", "127.0.0.1", "-p", port, "-t", "0.3", "-i", "0")
	if code != 0 {
		t.Fatalf("client against the background server: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(pidfile); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pidfile is still there 30 s after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond) // bounded poll for the server's exit
	}
	log, err := os.ReadFile(logfile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "receiver") && !strings.Contains(string(log), "sender") {
		t.Errorf("the log file has no test report:\n%s", log)
	}
}

// A background server that can't listen says why in the first process,
// in one line, with exit status 1, and leaves no process or pidfile.
func TestServerDetachedCannotListen(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	pidfile := filepath.Join(t.TempDir(), "s.pid")
	code, stderr := detachedServer(t, "-B", "127.0.0.1", "-p", port, "--pidfile", pidfile)
	if code != ExitFailed || !strings.Contains(stderr, "address already in use") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("pidfile left behind: %v", err)
	}
}
