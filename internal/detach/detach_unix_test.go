//go:build unix

package detach

import (
	"errors"
	"golang.org/x/sys/unix"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// modeEnv makes the test binary play the started copy (TestMain) instead
// of running the tests.
const modeEnv = "WIREPERF_DETACH_TEST_MODE"

func TestMain(m *testing.M) {
	switch os.Getenv(modeEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		if !Child() {
			os.Exit(7)
		}
		// The copy's session and descriptors, for the test to check.
		sid, _ := unix.Getsid(0)
		os.WriteFile(os.Getenv("WIREPERF_DETACH_TEST_OUT"), []byte(strconv.Itoa(sid)+" "+strconv.FormatBool(os.Getenv(pipeEnv) == "")), 0o600)
		n := NewNotice()
		n.Serving()
		n.Failed(errors.New("after serving: ignored"))
		waitForKill()
		os.Exit(0)
	case "fail":
		NewNotice().Failed(errors.New("listen tcp :5201: bind: address already in use\nand a second line"))
		os.Exit(1)
	case "die":
		os.Exit(3)
	case "hang": // never reports; Start's timeout kills it
		waitForKill()
		os.Exit(0)
	}
	os.Exit(9)
}

// waitForKill blocks the copy until the test kills it, or at most 30 s
// if the test died first.
func waitForKill() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, unix.SIGTERM)
	select {
	case <-c:
	case <-time.After(30 * time.Second):
	}
}

func TestStartServing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "copy")
	t.Setenv(modeEnv, "serve")
	t.Setenv("WIREPERF_DETACH_TEST_OUT", out)
	pid, err := Start(20 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := os.FindProcess(pid)
	t.Cleanup(func() { p.Kill(); p.Wait() })
	if pid == os.Getpid() || pid <= 0 {
		t.Fatalf("pid %d", pid)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != strconv.Itoa(pid) {
		t.Errorf("the copy's session is %q, want its own (%d)", f, pid)
	}
	if len(f) == 2 && f[1] != "true" {
		t.Errorf("the copy kept %s in its environment", pipeEnv)
	}
}

func TestStartReportsTheCopysError(t *testing.T) {
	t.Setenv(modeEnv, "fail")
	_, err := Start(20 * time.Second)
	want := "listen tcp :5201: bind: address already in use and a second line"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestStartCopyDiedSilently(t *testing.T) {
	t.Setenv(modeEnv, "die")
	_, err := Start(20 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "stopped before serving") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("got %v", err)
	}
}

func TestStartTimesOutAndStopsTheCopy(t *testing.T) {
	t.Setenv(modeEnv, "hang")
	_, err := Start(300 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not report serving") {
		t.Fatalf("got %v", err)
	}
}

// In a process Start didn't start, the notice is silent and harmless.
func TestNoticeOutsideTheCopy(t *testing.T) {
	if Child() {
		t.Fatal("the test process thinks it is the copy")
	}
	n := NewNotice()
	n.Serving()
	n.Failed(nil)
	var nilNotice *Notice
	nilNotice.Serving()
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\nb\rc"); got != "a b c" {
		t.Errorf("got %q", got)
	}
	if got := oneLine(strings.Repeat("é", 5000)); len([]rune(got)) != 1024 {
		t.Errorf("kept %d runes", len([]rune(got)))
	}
}
