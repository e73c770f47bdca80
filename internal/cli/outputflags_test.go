package cli

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// With --forceflush and --timestamps a reader of a pipe sees each row,
// stamped, while the test still runs; --get-server-output adds the
// server's report at the end.
func TestForceflushRowsReachAPipe(t *testing.T) {
	port := strconv.Itoa(startServerWith(t, func(c *server.Config) { c.ServerOutput = emit.ServerOutput(true) }))
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-c", "127.0.0.1", "-p", port, "-t", "3", "-i", "1",
			"--forceflush", "--timestamps=%T|", "--get-server-output"}, env{stdout: pw, stderr: &stderr})
		pw.Close()
	}()
	stamped := regexp.MustCompile(`^\d\d:\d\d:\d\d\|`)
	firstRow := regexp.MustCompile(`^\d\d:\d\d:\d\d\|\[  1\]   0\.00-1\.\d\d `)
	sc := bufio.NewScanner(pr)
	sawRow, sawServer := false, false
	for sc.Scan() {
		line := sc.Text()
		if !stamped.MatchString(line) {
			t.Errorf("line without its time: %q", line)
		}
		if firstRow.MatchString(line) && !sawRow {
			sawRow = true
			select {
			case code := <-done:
				t.Fatalf("the first row came only after the test ended (exit %d)", code)
			default:
			}
		}
		if strings.HasSuffix(line, "|Server output:") {
			sawServer = true
		}
	}
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !sawRow || !sawServer {
		t.Errorf("first row seen %v, server output seen %v", sawRow, sawServer)
	}
}

func TestTimestampsFormatRefused(t *testing.T) {
	code, _, stderr := runCLI("-c", "127.0.0.1", "--timestamps=%Q")
	if code != ExitUsage || !strings.Contains(stderr, "%Q is not supported") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("exit %d, stderr %q; want a one-line usage error naming %%Q", code, stderr)
	}
}

// The server prints a test's rows as they happen, prefixed with the test
// and its client, before the test ends; its summary still comes at the
// end.
func TestServerRowsLive(t *testing.T) {
	port := strconv.Itoa(loopback.FreePort(t))
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	served := make(chan int, 1)
	go func() {
		served <- run([]string{"-s", "-1", "-B", "127.0.0.1", "-p", port, "--log-level", "error"}, env{stdout: pw, stderr: io.Discard})
		pw.Close()
	}()
	// Bounded poll: the server is ready once it accepts.
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not listen: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // bounded poll, as said above
	}
	clientDone := make(chan int, 1)
	go func() {
		code, _, _ := runCLI("-c", "127.0.0.1", "-p", port, "-t", "3", "-i", "1")
		clientDone <- code
	}()
	prefixed := regexp.MustCompile(`^\[t\d+ 127\.0\.0\.1:\d+\] `)
	firstRow := regexp.MustCompile(`^\[t\d+ 127\.0\.0\.1:\d+\] \[  1\]   0\.00-1\.\d\d `)
	sc := bufio.NewScanner(pr)
	sawRow, sawSummary := false, false
	for sc.Scan() {
		line := sc.Text()
		if !prefixed.MatchString(line) {
			continue // the probe connection's log, if any
		}
		if firstRow.MatchString(line) && !sawRow {
			sawRow = true
			select {
			case code := <-clientDone:
				t.Fatalf("the server's first row came only after the test ended (client exit %d)", code)
			default:
			}
		}
		if strings.HasSuffix(line, "receiver") {
			sawSummary = true
		}
	}
	if code := <-clientDone; code != ExitOK {
		t.Fatalf("client exit %d", code)
	}
	if code := <-served; code != ExitOK {
		t.Fatalf("server exit %d", code)
	}
	if !sawRow || !sawSummary {
		t.Errorf("first row seen live %v, summary seen %v", sawRow, sawSummary)
	}
}
