package server

import (
	"context"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// In JSON, a test's log line carries its byte counts (not {"Key","Value"}
// pairs), an iperf3 line says protocol= once, and a connection that says
// nothing is logged at info.
func TestJSONLogLines(t *testing.T) {
	var buf syncbuf.Buffer
	ts := startServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	mustRun(t, ts, quickSpec())
	c, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	bin := iperf3bin.Path()
	if bin != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_ = exec.CommandContext(ctx, bin, "-c", "127.0.0.1", "-p", strconv.Itoa(ts.Addr().Port), "-t", "1").Run()
		cancel()
	}
	waitFor(t, func() bool { return strings.Contains(buf.String(), "said anything") })
	finished, ip3 := 0, 0
	for _, line := range strings.Split(buf.String(), "\n") {
		switch {
		case strings.Contains(line, `"msg":"test finished"`):
			finished++
			if !strings.Contains(line, `"flows":{"client→server":{"sent_bytes":`) || strings.Contains(line, `"Key"`) {
				t.Errorf("test finished line without byte counts: %s", line)
			}
		case strings.Contains(line, `"msg":"iperf3 test started"`):
			ip3++
			if n := strings.Count(line, `"protocol"`); n != 1 {
				t.Errorf("iperf3 line says protocol %d times: %s", n, line)
			}
		}
	}
	if finished == 0 || (bin != "" && ip3 == 0) {
		t.Fatalf("saw %d test lines and %d iperf3 lines in:\n%s", finished, ip3, buf.String())
	}
}
