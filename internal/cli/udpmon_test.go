package cli

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

func TestUDPMonUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"udpmon"}, "HOST"},
		{[]string{"udpmon", "h", "--sizes", "8"}, "size 8"},
		{[]string{"udpmon", "h", "--spacing", "5:1:1"}, "--spacing"},
		{[]string{"udpmon", "h", "--csv", "--json"}, "choose one"},
		{[]string{"udpmon", "h", "--count", "0"}, "--count"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d mentioning %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

func TestUDPMonOutputs(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	args := []string{"udpmon", "127.0.0.1", "-p", port, "--sizes", "512,1472", "--spacing", "0,20", "--count", "2000"}
	code, out, stderr := runCLI(args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3+4+countVerdicts(out)+1 || !strings.Contains(lines[2], "recv Mb/s") || !strings.Contains(out, "20.00us") {
		t.Errorf("table:\n%s", out)
	}
	if strings.Contains(out, "\r") {
		t.Errorf("a progress bar on a pipe")
	}
	code, out, _ = runCLI(append(args, "--csv")...)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != ExitOK || err != nil || len(rows) != 5 || rows[0][0] != "size" || rows[2][0] != "512" || rows[2][1] != "20000" {
		t.Errorf("CSV (exit %d, %v):\n%s", code, err, out)
	}
	code, out, _ = runCLI(append(args, "--json")...)
	var doc struct {
		Kind  string
		Sweep struct {
			Points []struct {
				Size         int
				Sent         int64
				Received     int64
				InterArrival *struct{ Count int64 }                  `json:"inter_arrival_histogram"`
				ReceiverHost *struct{ CPUs []struct{ Name string } } `json:"receiver_host"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || doc.Kind != "udpmon" || len(doc.Sweep.Points) != 4 {
		t.Fatalf("JSON (exit %d, %v):\n%.2000s", code, err, out)
	}
	for _, p := range doc.Sweep.Points {
		if p.Sent != 2000 || p.InterArrival == nil || p.ReceiverHost == nil || len(p.ReceiverHost.CPUs) == 0 {
			t.Errorf("point %+v", p)
		}
	}
}

func countVerdicts(out string) int { return strings.Count(out, ", spacing ") }

// A wrong port fails every point the same way: the sweep stops at the
// first, and says why in one line.
func TestUDPMonWrongPortOneLine(t *testing.T) {
	code, out, stderr := runCLI("udpmon", "127.0.0.1", "-p", strconv.Itoa(loopback.FreePort(t)), "--sizes", "512,1472", "--spacing", "0,10", "--count", "10", "--connect-timeout", "1s")
	if code != ExitFailed || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "connection refused") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s\nwant exit 1, nothing on stdout and one line on stderr", code, out, stderr)
	}
}

// A refusal by the server, other than a busy one, would recur too.
func TestUDPMonRefusedOneLine(t *testing.T) {
	port := strconv.Itoa(startServerWith(t, func(c *server.Config) {
		c.Limits.MaxTestMemory = 100 // less than one 512-byte buffer: every test is refused
	}))
	code, out, stderr := runCLI("udpmon", "127.0.0.1", "-p", port, "--sizes", "512,1472", "--spacing", "0,10", "--count", "10")
	if code != ExitFailed || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "refused") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s\nwant exit 1, nothing on stdout and one line on stderr", code, out, stderr)
	}
}

// A sweep of one point says so in the singular.
func TestUDPMonOnePoint(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("udpmon", "127.0.0.1", "-p", port, "--sizes", "512", "--spacing", "10", "--count", "200")
	if code != ExitOK || !strings.Contains(out, "\n1 point in ") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s\nwant \"1 point in\"", code, out, stderr)
	}
}
