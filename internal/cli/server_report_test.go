package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// serveOnce runs `wireperf -s --once` with args in the background and one
// short client test against it; it returns the server's exit code and
// output once the server has stopped. before runs after the server
// started, before the client's test.
func serveOnce(t *testing.T, args []string, before func()) (code int, stdout, stderr string) {
	t.Helper()
	port := strconv.Itoa(loopback.FreePort(t))
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(append([]string{"-s", "-1", "-p", port}, args...), env{stdout: &out, stderr: &errb})
	}()
	if before != nil {
		before()
	}
	var ccode int
	var cerr string
	for try := 0; try < 100; try++ {
		ccode, _, cerr = runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "-i", "0.5", "--connect-timeout", "5")
		if !strings.Contains(cerr, "connection refused") {
			break
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: until the server listens, at most 100 tries
	}
	if ccode != ExitOK {
		t.Fatalf("client exit %d: %s", ccode, cerr)
	}
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the --once server did not stop after its test")
	}
	return code, out.String(), errb.String()
}

// --pidfile holds the process ID while the server runs and is gone after;
// --logfile gets both the report, every line prefixed, and the log.
func TestServerPidfileAndLogfile(t *testing.T) {
	dir := t.TempDir()
	pidfile, logfile := filepath.Join(dir, "wireperf.pid"), filepath.Join(dir, "server.log")
	if err := os.WriteFile(logfile, []byte("kept from before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := serveOnce(t, []string{"--pidfile", pidfile, "--logfile", logfile}, func() {
		var b []byte
		var err error
		for try := 0; try < 100; try++ {
			if b, err = os.ReadFile(pidfile); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // bounded poll: until the server has started, at most 100 tries
		}
		if err != nil {
			t.Errorf("no --pidfile while the server runs: %v", err)
		} else if got := strings.TrimSpace(string(b)); got != strconv.Itoa(os.Getpid()) {
			t.Errorf("--pidfile holds %q, want %d", got, os.Getpid())
		}
	})
	if code != ExitOK || out != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q: with --logfile both belong in the file", code, out, stderr)
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("--pidfile still there after the server stopped (%v)", err)
	}
	b, err := os.ReadFile(logfile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if !strings.HasPrefix(log, "kept from before\n") {
		t.Errorf("--logfile was not appended to:\n%s", log)
	}
	for _, want := range []string{"msg=\"server listening\"", "] Accepted connection from 127.0.0.1", "] [ ID] Interval", "  receiver"} {
		if !strings.Contains(log, want) {
			t.Errorf("no %q in the --logfile:\n%s", want, log)
		}
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "Accepted connection") && !strings.HasPrefix(l, "[t1 127.0.0.1:") {
			t.Errorf("report line without its test's prefix: %q", l)
		}
	}
}

// --json: one JSON document per test and line, with the test's ID and
// client.
func TestServerJSONLines(t *testing.T) {
	code, out, _ := serveOnce(t, []string{"--json", "--log-level", "warn"}, nil)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines for one test, want one:\n%s", len(lines), out)
	}
	var doc struct {
		Test   string `json:"test"`
		Peer   string `json:"peer"`
		Result struct {
			End struct {
				SumReceived struct{ Bytes int64 } `json:"sum_received"`
			} `json:"end"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, lines[0])
	}
	if doc.Test != "t1" || !strings.HasPrefix(doc.Peer, "127.0.0.1:") || doc.Result.End.SumReceived.Bytes == 0 {
		t.Errorf("test %q, peer %q, received %d bytes", doc.Test, doc.Peer, doc.Result.End.SumReceived.Bytes)
	}
}

func TestServerReportFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.pid")
	if err := os.WriteFile(stale, []byte("424242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-s", "-p", "0", "--pidfile", stale}, ExitFailed, "already exists (pid 424242)"},
		{[]string{"-s", "-p", "0", "--pidfile", filepath.Join(dir, "no", "such", "dir.pid")}, ExitFailed, "--pidfile: open"},
		{[]string{"-s", "-p", "0", "--logfile", filepath.Join(dir, "no", "such", "dir.log")}, ExitFailed, "--logfile: open"},
		{[]string{"-s", "-p", "0", "-i", "-1"}, ExitUsage, "-i"},
		{[]string{"-s", "-p", "0", "-i", "0.001"}, ExitUsage, "want 0 (no rows) or at least"},
	}
	for _, tc := range tests {
		code, out, stderr := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d and one line with %q", tc.args, code, stderr, out, tc.code, tc.want)
		}
	}
	if b, err := os.ReadFile(stale); err != nil || string(b) != "424242\n" {
		t.Errorf("a refused --pidfile was changed: %q, %v", b, err)
	}
}
