package cli

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/server"
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
	firstRow := regexp.MustCompile(`^\d\d:\d\d:\d\d\|\[  1\]   0\.00-1\.00 `)
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
